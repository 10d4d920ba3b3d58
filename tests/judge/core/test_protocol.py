"""The judge reads runner output as untrusted data: malformed, truncated and oversized streams."""

import json
import struct

import pytest
import torch
from safetensors.torch import save

from judge.core.protocol import MAGIC, HeadScanner, StreamLimits, encode_frame, parse_stream


def _raw_frame(head: bytes, blob: bytes = b"") -> bytes:
    return struct.pack(">4sIQ", MAGIC, len(head), len(blob)) + head + blob


def _safetensors(header: dict[str, object], data: bytes) -> bytes:
    h = json.dumps(header).encode()
    return struct.pack("<Q", len(h)) + h + data


def test_round_trip_of_frames_with_tensors() -> None:
    t = {"0": torch.arange(6, dtype=torch.float32).reshape(2, 3), "1": torch.ones(2, dtype=torch.bfloat16)}
    data = encode_frame({"kind": "hello"}) + encode_frame({"kind": "case", "case": "a"}, t)
    parsed = parse_stream(data)
    assert parsed.error is None
    assert [f.kind for f in parsed.frames] == ["hello", "case"]
    assert torch.equal(parsed.frames[1].tensors["0"], t["0"])
    assert parsed.frames[1].tensors["1"].dtype == torch.bfloat16


def test_truncated_stream_keeps_whole_frames() -> None:
    hello = encode_frame({"kind": "hello"})
    data = hello + encode_frame({"kind": "case"}, {"0": torch.ones(100)})
    for cut in (len(data) - 1, len(data) - 300, len(hello) + 3):
        parsed = parse_stream(data[:cut])
        assert parsed.error is not None and "ends inside" in parsed.error
        assert [f.kind for f in parsed.frames] == ["hello"]


def test_foreign_bytes_are_reported() -> None:
    parsed = parse_stream(encode_frame({"kind": "hello"}) + b"print output here")
    assert parsed.error is not None and "foreign bytes" in parsed.error
    assert len(parsed.frames) == 1


@pytest.mark.parametrize(
    "head",
    [b"not json", b"[1, 2]", b'{"no_kind": 1}', b"\xff\xfe", b"[" * 100000],
)
def test_malformed_heads(head: bytes) -> None:
    parsed = parse_stream(_raw_frame(head))
    assert parsed.error is not None
    assert parsed.frames == []


def test_oversized_stream_and_head_and_frame_count() -> None:
    limits = StreamLimits(max_bytes=1000, max_head_bytes=100, max_frames=2)
    assert "larger than" in (parse_stream(b"\0" * 1001, limits).error or "")
    big_head = _raw_frame(json.dumps({"kind": "x", "pad": "a" * 200}).encode())
    assert "exceeds" in (parse_stream(big_head, limits).error or "")
    three = encode_frame({"kind": "a"}) * 3
    assert "more than 2 frames" in (parse_stream(three, limits).error or "")


def test_declared_lengths_larger_than_the_data() -> None:
    data = struct.pack(">4sIQ", MAGIC, 10, 2**60) + b'{"kind":1}'
    parsed = parse_stream(data)
    assert parsed.error is not None


@pytest.mark.parametrize(
    ("header", "data", "why"),
    [
        ({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 4, "offsets outside"),
        ({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"\0" * 8, "does not match"),
        ({"a": {"dtype": "OBJECT", "shape": [1], "data_offsets": [0, 8]}}, b"\0" * 8, "unsupported dtype"),
        ({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}, b"\0" * 4, "malformed shape"),
        ({"a": {"dtype": "F32", "shape": "2", "data_offsets": [0, 8]}}, b"\0" * 8, "malformed shape"),
        ({"a": [1, 2]}, b"", "malformed entry"),
        (
            {
                "a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]},
            },
            b"\0" * 12,
            "overlap",
        ),
    ],
)
def test_malformed_safetensors_are_refused(header: dict[str, object], data: bytes, why: str) -> None:
    parsed = parse_stream(_raw_frame(b'{"kind": "case"}', _safetensors(header, data)))
    assert parsed.error is not None and why in parsed.error


def test_tensor_and_element_caps() -> None:
    many = {str(i): torch.zeros(1) for i in range(10)}
    limits = StreamLimits(max_tensors_per_frame=5)
    assert "more than 5 tensors" in (parse_stream(encode_frame({"kind": "c"}, many), limits).error or "")
    big = {"0": torch.zeros(1000)}
    limits = StreamLimits(max_elements_per_frame=999)
    assert "more than 999 elements" in (parse_stream(encode_frame({"kind": "c"}, big), limits).error or "")
    limits = StreamLimits(max_elements_total=1500)
    two = encode_frame({"kind": "c"}, big) * 2
    assert "more than 1500 elements" in (parse_stream(two, limits).error or "")


def test_huge_declared_shape_is_refused_before_allocation() -> None:
    header = {"a": {"dtype": "F64", "shape": [2**20, 2**20], "data_offsets": [0, 8]}}
    parsed = parse_stream(_raw_frame(b'{"kind": "case"}', _safetensors(header, b"\0" * 8)))
    assert parsed.error is not None and "elements" in parsed.error


def test_blob_is_a_standard_safetensors_file() -> None:
    blob = save({"w": torch.ones(3)})
    parsed = parse_stream(_raw_frame(b'{"kind": "case"}', blob))
    assert parsed.error is None and torch.equal(parsed.frames[0].tensors["w"], torch.ones(3))


def _assortment() -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return {
        "f32": torch.randn(3, 4, generator=g),
        "bf16": torch.randn(5, generator=g).to(torch.bfloat16),
        "f16": torch.randn(2, 2, generator=g).half(),
        "f64": torch.randn(2, generator=g).double(),
        "i64": torch.arange(-3, 4),
        "u8": torch.tensor([0, 255], dtype=torch.uint8),
        "flags": torch.tensor([True, False, True]),
        "scalar": torch.tensor(2.5),
        "empty": torch.zeros(0, 3),
        "strided": torch.arange(12.0).reshape(3, 4).t(),  # not contiguous
    }


def test_own_codec_reads_and_writes_standard_safetensors() -> None:
    """The kit has only torch: our writer's bytes load with the safetensors package, and its load
    with ours, bit for bit."""
    from safetensors.torch import load

    from judge.core.protocol import StreamLimits, parse_safetensors, save_safetensors

    tensors = _assortment()
    theirs = load(save_safetensors(tensors))
    ours, elements = parse_safetensors(save({k: v.contiguous() for k, v in tensors.items()}), StreamLimits())
    assert elements == sum(t.numel() for t in tensors.values())
    for loaded in (theirs, ours):
        assert loaded.keys() == tensors.keys()
        for name, t in tensors.items():
            assert loaded[name].dtype == t.dtype and torch.equal(loaded[name], t), name


def test_bools_other_than_0_and_1_are_refused() -> None:
    blob = _safetensors({"b": {"dtype": "BOOL", "shape": [2], "data_offsets": [0, 2]}}, b"\x01\x07")
    parsed = parse_stream(_raw_frame(b'{"kind": "case"}', blob))
    assert parsed.error is not None and "bools" in parsed.error


def test_the_head_scanner_reads_heads_as_bytes_come_and_skips_blobs() -> None:
    data = (
        encode_frame({"kind": "hello"})
        + encode_frame({"kind": "case", "case": "a"}, {"0": torch.ones(300)})
        + encode_frame({"kind": "case", "case": "b"})
    )
    for step in (1, 7, 1000, len(data)):
        scanner = HeadScanner()
        heads = []
        for i in range(0, len(data), step):
            heads += scanner.feed(data[i : i + step])
        assert [h.get("case", h["kind"]) for h in heads] == ["hello", "a", "b"], step
        assert not scanner.stopped


def test_the_head_scanner_stops_at_bytes_that_are_not_a_frame() -> None:
    scanner = HeadScanner()
    assert scanner.feed(encode_frame({"kind": "hello"}) + b"NOPE" + b"\0" * 20) == [{"kind": "hello"}]
    assert scanner.stopped
    assert scanner.feed(encode_frame({"kind": "case", "case": "a"})) == []
    broken = HeadScanner()
    assert broken.feed(_raw_frame(b"{not json")) == [] and broken.stopped
