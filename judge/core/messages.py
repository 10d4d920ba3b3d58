"""Every message the judge writes for a learner, by key, in both languages.

Producers say `msg("wrong_shape", expected=..., got=...)`; the report keeps both texts apart
and whoever shows it picks the reader's language. One table, so the wording of a verdict is
the same wherever it appears and a translation is never missing (a test checks the keys).
"""

from __future__ import annotations

from typing import Any

from judge.core.texts import Text

CATALOG: dict[str, tuple[str, str]] = {
    # checkers
    "wrong_shape": ("形状不对：应为 {expected}，你的是 {got}", "wrong shape: expected {expected}, got {got}"),
    "wrong_dtype": (
        "dtype 不对：应为 {expected}，你的是 {got}",
        "wrong dtype: expected {expected}, got {got}",
    ),
    "elements_differ": (
        "{bad} / {total} 个元素不符（{share}），{rule}",
        "{bad} / {total} elements differ ({share}), {rule}",
    ),
    "worst_error": (
        "最大绝对误差 {abs}（在 {at}）；最大相对误差 {rel}",
        "max abs err {abs} at {at}; max rel err {rel}",
    ),
    "worst_error_at_zero": (
        "最大绝对误差 {abs}（在 {at}）；参考值为 0",
        "max abs err {abs} at {at}; the reference is 0",
    ),
    "first_mismatches": ("最先不符的位置：{items}", "first: {items}"),
    "first_mismatch_item": ("{at} 应为 {expected}，你的是 {got}", "{at} expected {expected} got {got}"),
    "rule_exact": ("须完全相等", "must be exactly equal"),
    "rule_tolerance": ("容差 rtol={rtol}, atol={atol}", "tolerance rtol={rtol}, atol={atol}"),
    "rule_ulps": ("超过 {max_ulps} ulp（最多 {worst} ulp）", "more than {max_ulps} ulp (max {worst} ulp)"),
    "ulps_share": ("{share}% 的元素有差别", "{share}% of elements differ at all"),
    "rule_too_many_differ": (
        "相差的元素太多：{share}% > 允许的 {allowed}%",
        "too many differ: {share}% > {allowed}% allowed",
    ),
    "special_nan": ("{n} 个 NaN 出现在参考值是数字的位置", "{n} NaN where the reference is a number"),
    "special_inf": ("{n} 个 inf 出现在参考值有限的位置", "{n} inf where the reference is finite"),
    "special_other": (
        "NaN/inf 的位置或符号与参考不同",
        "NaN/inf where the reference has none or another sign",
    ),
    "rule_special": ("NaN/inf：{what}", "NaN/inf: {what}"),
    # compare
    "expected_tensor": ("应为张量 {expected}，你的是 {got}", "expected a tensor {expected}, got {got}"),
    "expected_dict": ("应为 dict，你的是 {got}", "expected a dict, got {got}"),
    "keys_missing": ("缺少 {keys}", "missing {keys}"),
    "keys_unexpected": ("多出 {keys}", "unexpected {keys}"),
    "expected_sequence": ("应为 {n} 项的序列，你的是 {got}", "expected a sequence of {n}, got {got}"),
    "wrong_length": ("长度不对：应为 {expected} 项，你的有 {got} 项", "expected {expected} items, got {got}"),
    "expected_value": ("应为 {expected}，你的是 {got}", "expected {expected}, got {got}"),
    # grading
    "case_not_reported": ("评测进程没有报告这个用例", "the runner did not report this case"),
    "part_missing": (
        "这道题用到第 {problem} 题的零件 {module}，你还没有通过第 {problem} 题：先去做它（/problems/{problem}）",
        "this problem uses part {module} from problem {problem}, which you have not solved yet: "
        "solve it first (/problems/{problem})",
    ),
    "not_run": ("未运行：运行停在了用例 {case}", "not run: the run stopped during case {case}"),
    "reference_missing_case": ("参考解没有这个用例的结果", "the reference has no result for this case"),
    "entry_point_missing_case": (
        "这个用例用到入口 {name}，你的代码没有定义它",
        "this case uses the entry point {name}, which your code does not define",
    ),
    "no_entry_points": (
        "缺少入口：{names}（这个文件没有定义本题要的任何入口）",
        "missing entry point(s): {names} (the file defines none of this problem's entry points)",
    ),
    "entry_points_not_callable": ("入口不可调用：{names}", "entry point(s) not callable: {names}"),
    "entry_points_missing": (
        "你的代码缺少入口 {names}：用到它的用例不通过，其余用例照常评测",
        "your code lacks the entry point(s) {names}: the cases that use them fail, the others are judged",
    ),
    "forbidden": (
        "调用了本题禁止的 {api}，请自己实现",
        "your code calls {api}, which this problem forbids: write it yourself",
    ),
    "case_out_of_memory": ("内存不足", "your code ran out of memory"),
    "never_loaded": ("评测进程没有加载你的代码", "the runner never loaded your code"),
    "import_out_of_memory": ("导入你的代码时内存不足", "out of memory while importing your code"),
    "import_error": ("导入你的代码时出错", "error while importing your code"),
    "source_too_large": ("代码太长：超过 {kib} KiB", "your code is larger than {kib} KiB"),
    "reference_failed": ("参考解无法运行：{error}", "the reference could not be run: {error}"),
    # how a run stopped
    "sandbox_failed": ("评测系统出错：{error}", "the sandbox failed: {error}"),
    "runner_not_ready": ("评测进程没能及时启动", "the runner did not become ready in time"),
    "runner_failed_early": ("评测进程在就绪之前就失败了", "the runner failed before it was ready"),
    "outputs_too_large": (
        "返回的观测数据超过 {mib} MiB",
        "your outputs are larger than the judge accepts ({mib} MiB)",
    ),
    "printed_too_much": (
        "打印输出超过 {kib} KiB：去掉循环里的调试输出",
        "your code printed more than {kib} KiB; remove debug prints from loops",
    ),
    "out_of_time": (
        "运行超时：时间用完了，所有用例合计限 {limit} 秒",
        "your code ran out of time: limit {limit} s for all cases together",
    ),
    "out_of_cpu": (
        "运行超时：CPU 时间用完了，所有用例合计限 {limit} 秒",
        "your code ran out of CPU time: limit {limit} s for all cases together",
    ),
    "out_of_memory": (
        "内存超限：用了超过 {mib} MiB，被终止",
        "your code used more than {mib} MiB and was stopped",
    ),
    "runner_broken": (
        "你的代码开始运行后，评测进程出错了（是否关闭或写入了评测进程的文件，或改动了它用到的模块？）",
        "the judge's runner failed after your code started (did it close or write to the runner's files, or patch modules the runner uses?)",
    ),
    "runner_internal": ("评测进程内部错误", "the runner failed"),
    "killed_by_signal": ("进程被信号 {name} 终止", "your code's process was killed by {name}"),
    "stream_damaged": (
        "结果流被破坏（{why}）：你的代码是否写入了评测进程的文件描述符？",
        "the result stream was damaged ({why}); did your code write to the runner's file descriptors?",
    ),
    # Hidden cases run in a job of their own whose output never reaches the learner: what the
    # code wrote there (an exception, a printed line) could carry that case's inputs out.
    "sealed_error": (
        "你的代码在这个隐藏用例上抛出了异常（隐藏用例不显示你的代码的报错与输出）",
        "your code raised an error on this hidden case (for hidden cases, your code's errors and output are not shown)",
    ),
    "sealed_load": (
        "你的代码在运行隐藏用例时没能加载（隐藏用例不显示你的代码的报错与输出）",
        "your code did not load in the run of the hidden cases (for hidden cases, your code's errors and output are not shown)",
    ),
    "sealed_stopped": (
        "运行隐藏用例的进程提前结束了（隐藏用例不显示你的代码的报错与输出）",
        "the run of the hidden cases ended early (for hidden cases, your code's errors and output are not shown)",
    ),
    "sealed_forbidden": (
        "你的代码在这个隐藏用例上调用了禁止的 API",
        "your code called a forbidden API on this hidden case",
    ),
    "not_run_after_public": (
        "没有运行：公开用例的运行已提前结束",
        "not run: the run of the public cases stopped early",
    ),
    "ended_early": (
        "你的代码提前结束了进程（退出码 {code}）",
        "your code ended the process early (exit code {code})",
    ),
    # what a case returned, when the result stream cannot carry it
    "unreturnable_dtype": (
        "你的代码返回了 dtype 为 {dtype} 的张量，这种 dtype 不能返回：请先转换成 {allowed} 之一",
        "your code returned a tensor of dtype {dtype}, and this dtype cannot be returned: "
        "convert it to one of {allowed} first",
    ),
    "unreturnable_layout": (
        "你的代码返回了 {kind} 张量，这种张量不能返回：请返回普通的稠密张量（.to_dense()；嵌套张量用 .unbind()）",
        "your code returned a {kind} tensor, which cannot be returned: return a plain dense tensor "
        "(.to_dense(), or .unbind() for a nested one)",
    ),  # the backend
    "unsandboxed": (
        "本地后端不是安全沙箱：提交的代码以你的身份运行。",
        "The local backend is no security boundary: submitted code runs as you.",
    ),
    # the platform's queue: a judgement that could not be made, as the report's one warning
    "judging_abandoned": (
        "评测失败 {attempts} 次（评测进程每次都中途停止），已放弃；这不是你的代码的问题。",
        "Judging failed {attempts} times (the worker stopped each time); this is not your code's fault.",
    ),
    "problem_withdrawn": ("题目 {problem} 已下线。", "Problem {problem} is no longer offered."),
    "judging_failed": ("评测失败 {attempts} 次：{reason}", "Judging failed {attempts} times: {reason}"),
    "judging_unsandboxed": (
        "评测没有沙箱：只适合你一个人在本机使用的服务器",
        "judging without a sandbox: only for a server that you alone use on this machine",
    ),
    "no_docker_fallback": (
        "没有可用的 Docker 沙箱（{reason}），改用本地后端，它不是安全沙箱",
        "no Docker sandbox ({reason}); using the local backend, which is no security boundary",
    ),
    # an author's packages as archives (judge pack, judge problems add): said to the author
    "pack_done": (
        "已打包 {path}：{name} 第 {version} 版，{files} 个文件，sha256 {hash}",
        "packed {path}: {name} version {version}, {files} files, sha256 {hash}",
    ),
    "pack_reserved_name": (
        "题目文件夹里不能有名为 {name} 的文件：打包时这个名字留给清单",
        "the package may not hold a file named {name}: packing writes the manifest under that name",
    ),
    "add_not_archive": (
        "{path} 不是可读的 .tar.gz 题包：{error}",
        "{path} is no readable .tar.gz package: {error}",
    ),
    "add_no_folder": ("{folder} 不是文件夹，不能装题目", "{folder} is no folder to install problems into"),
    "add_cannot_write": (
        "无法写入题目文件夹 {folder}：{error}；未安装",
        "cannot write into the problems folder {folder}: {error}; nothing was installed",
    ),
    "add_entry_absolute": ("拒绝：条目 {name} 是绝对路径", "refused: entry {name} is an absolute path"),
    "add_entry_parent": (
        "拒绝：条目 {name} 含有 ..，会写到题目文件夹之外",
        "refused: entry {name} contains .. and would write outside the package",
    ),
    "add_entry_link": (
        "拒绝：条目 {name} 是链接；题包只能含普通文件",
        "refused: entry {name} is a link; a package holds files only",
    ),
    "add_entry_special": (
        "拒绝：条目 {name} 不是普通文件（设备、管道之类）",
        "refused: entry {name} is not a regular file (a device, a pipe or the like)",
    ),
    "add_entry_outside": (
        "拒绝：条目 {name} 不在唯一的顶层文件夹 {top}/ 之下",
        "refused: entry {name} is not under the one top folder {top}/",
    ),
    "add_entry_twice": ("拒绝：条目 {name} 出现了两次", "refused: entry {name} appears twice"),
    "add_too_many_files": (
        "拒绝：题包有 {count} 个条目，超过上限 {limit}",
        "refused: the archive has {count} entries, more than the limit of {limit}",
    ),
    "add_too_large": (
        "拒绝：题包解开后有 {mib} MiB，超过上限 {limit} MiB",
        "refused: the archive unpacks to {mib} MiB, more than the limit of {limit} MiB",
    ),
    "add_bad_manifest": (
        "拒绝：清单 {name} 缺失或无法读取：{error}",
        "refused: the manifest {name} is missing or unreadable: {error}",
    ),
    "add_hash_mismatch": (
        "拒绝：文件与清单记录的哈希不符（清单 {expected}，文件 {got}）：题包在打包后被改动过",
        "refused: the files do not match the manifest's hash (manifest {expected}, files {got}): "
        "the archive was changed after it was packed",
    ),
    "add_not_a_package": (
        "拒绝：解开的题目无法加载：{error}",
        "refused: the unpacked package does not load: {error}",
    ),
    "add_missing_parts": (
        "拒绝：第 {problem} 题用到的零件题不在 {folder} 中：{parts}；请先安装它们",
        "refused: problem {problem} needs parts that are not in {folder}: {parts}; add them first",
    ),
    "add_id_taken": (
        "拒绝：{folder} 中的 {existing} 已占用编号 {problem}，而题包是 {name}",
        "refused: id {problem} is taken in {folder} by {existing}, and the archive holds {name}",
    ),
    "add_installed_broken": (
        "拒绝：已安装的 {existing} 无法加载（{error}）：请先修好或移走它",
        "refused: the installed {existing} does not load ({error}): fix or remove it first",
    ),
    "add_older": (
        "拒绝：已安装 {name} 第 {installed} 版，题包的第 {version} 版更旧",
        "refused: {name} version {installed} is installed, and the archive's version {version} is older",
    ),
    "add_same_version_differs": (
        "拒绝：已安装的 {name} 也是第 {version} 版，但文件不同：改过的题目要在 problem.toml 里提高 version",
        "refused: {name} version {version} is installed with other files: a changed package needs "
        "a higher version in problem.toml",
    ),
    "add_newer_needs_flag": (
        "拒绝：已安装 {name} 第 {installed} 版；要换成题包的第 {version} 版，请加 --replace-older",
        "refused: {name} version {installed} is installed; pass --replace-older to replace it "
        "with the archive's version {version}",
    ),
    "add_unsound": (
        "拒绝：题目没有通过 judge validate（见上面的报告），未安装",
        "refused: the package is not sound under judge validate (see the report above); nothing was installed",
    ),
    "add_installed": ("已安装 {name} 第 {version} 版：{path}", "installed {name} version {version}: {path}"),
    "add_replaced": (
        "已把 {name} 从第 {old} 版换成第 {version} 版：{path}",
        "replaced {name} version {old} with version {version}: {path}",
    ),
    "add_already": (
        "{name} 第 {version} 版已经安装，文件相同：无需改动",
        "{name} version {version} is already installed with the same files: nothing to do",
    ),
    "add_next": (
        "下一步：运行 judge problems sync 把它载入网站，或在管理页点「从磁盘重新加载题目」",
        "next: run judge problems sync to load it into the site, or press “Reload problems from disk” "
        "on the admin page",
    ),
}


def msg(key: str, **params: Any) -> Text:
    zh, en = CATALOG[key]
    return Text(zh.format(**params), en.format(**params))
