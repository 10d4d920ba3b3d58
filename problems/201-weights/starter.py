"""qwen/weights.py：课程里每个脚本都靠它找到并读入检查点。
qwen/weights.py: every script of the course finds and reads the checkpoint through it.

safetensors 文件的格式 / the safetensors format:
    8 字节小端无符号整数 N，接着 N 字节的 JSON 头，然后是所有张量的原始字节。
    an 8-byte little-endian unsigned integer N, then an N-byte JSON header, then the raw bytes.
    头里每个名字对应 {"dtype": "BF16" | "F32" | ..., "shape": [...], "data_offsets": [start, end]}，
    偏移从头之后算起；"__metadata__" 不是张量。
    each name maps to {"dtype", "shape", "data_offsets": [start, end]}, offsets counted from the
    end of the header; "__metadata__" is not a tensor.
"""

import json
import os
import struct
import sys
from pathlib import Path

import torch


class Config:
    """文本模型的配置：config.json 里文本部分的每个字段都是一个属性（cfg.hidden_size ...）。
    The text model's config: every field of config.json's text part as an attribute.
    """

    @classmethod
    def load(cls, path):
        # TODO: 读 path/config.json；有 "text_config" 时用它，否则用顶层
        # TODO: read path/config.json; its "text_config" if it has one, else the top level
        raise NotImplementedError


def find_model():
    """检查点文件夹（pathlib.Path）：$QWEN_MODEL，否则 ~/models/qwen3.5，否则课程包里的 tiny-qwen3.5。
    The checkpoint folder (a pathlib.Path): $QWEN_MODEL, else ~/models/qwen3.5, else the kit's tiny-qwen3.5.
    """
    raise NotImplementedError


def load_weights(path):
    """{名字: 张量}：文本模型的全部张量，名字去掉语言模型的前缀，不要 model.visual. 和 mtp.。
    {name: tensor}: every tensor of the text model, the language model's prefix stripped, without
    model.visual. and mtp.
    """
    raise NotImplementedError


def load(module, W, prefix):
    """把 W 里以 prefix 开头的条目（去掉 prefix）严格地装进 module，返回 module。
    Load the entries of W under prefix (prefix stripped) into module, strictly; return module.
    """
    raise NotImplementedError
