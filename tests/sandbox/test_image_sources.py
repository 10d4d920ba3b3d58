"""The offline image build's Debian mirror: read from apt's sources (one-line and deb822 files)
the way apt reads them, unless the image_mirror setting says otherwise. No Docker needed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from sandbox.image import DEBIAN_SUITE, AptSource, ImageError, apt_sources, debian_mirror

# Every address below is under .invalid (RFC 2606): none of them can name a real host.
ONE_LINE = """\
# deb http://commented.invalid/debian bookworm main
deb-src http://source.invalid/debian bookworm main
deb [arch=amd64 signed-by=/usr/share/keyrings/x.gpg] http://mirror-a.invalid/debian bookworm main contrib
deb http://mirror-a.invalid/debian-security bookworm-security main  # trailing comment
"""
DEB822 = """\
# a comment before the first stanza
Types: deb deb-src
URIs: http://mirror-b.invalid/debian
  http://mirror-c.invalid/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Enabled: no
Types: deb
URIs: http://disabled.invalid/debian
Suites: bookworm
Components: main

Types: deb-src
URIs: http://only-sources.invalid/debian
Suites: bookworm
Components: main
"""


def apt_dir(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "apt"
    (root / "sources.list.d").mkdir(parents=True)
    for name, text in files.items():
        (root / name).write_text(text)
    return root


def test_one_line_entries_with_options_and_comments(tmp_path: Path) -> None:
    found = apt_sources(apt_dir(tmp_path, {"sources.list": ONE_LINE}))
    assert found == [
        AptSource("http://mirror-a.invalid/debian", ("bookworm",), ("main", "contrib")),
        AptSource("http://mirror-a.invalid/debian-security", ("bookworm-security",), ("main",)),
    ]


def test_deb822_stanzas_continuations_and_disabled_ones(tmp_path: Path) -> None:
    found = apt_sources(apt_dir(tmp_path, {"sources.list.d/debian.sources": DEB822}))
    suites, main = ("bookworm", "bookworm-updates"), ("main",)
    assert found == [
        AptSource("http://mirror-b.invalid/debian", suites, main),
        AptSource("http://mirror-c.invalid/debian", suites, main),
    ]


def test_files_in_apts_order_and_other_names_ignored(tmp_path: Path) -> None:
    root = apt_dir(
        tmp_path,
        {
            "sources.list": "",
            "sources.list.d/b.list": "deb http://second.invalid/debian bookworm main\n",
            "sources.list.d/a.sources": "Types: deb\nURIs: http://first.invalid/debian\nSuites: bookworm\n"
            "Components: main\n",
            "sources.list.d/c.list.disabled": "deb http://never.invalid/debian bookworm main\n",
            "sources.list.d/d.list.save": "deb http://never.invalid/debian bookworm main\n",
        },
    )
    assert [s.uri for s in apt_sources(root)] == [
        "http://first.invalid/debian",
        "http://second.invalid/debian",
    ]
    assert debian_mirror(None, root) == "http://first.invalid/debian"


def test_the_mirror_is_the_first_that_serves_the_suites_main(tmp_path: Path) -> None:
    root = apt_dir(
        tmp_path,
        {
            "sources.list": "deb http://ports.invalid/debian bookworm contrib\n"
            "deb mirror+file:/etc/apt/mirrors.txt bookworm main\n"
            "deb http://security.invalid/debian-security bookworm-security main\n"
            "deb https://chosen.invalid/debian/ bookworm main\n",
        },
    )
    assert debian_mirror(None, root) == "https://chosen.invalid/debian"


def test_the_setting_wins(tmp_path: Path) -> None:
    root = apt_dir(tmp_path, {"sources.list": ONE_LINE})
    assert debian_mirror(" http://override.invalid/debian/ ", root) == "http://override.invalid/debian"
    assert debian_mirror("", root) == "http://mirror-a.invalid/debian"  # empty: not set


def test_another_debian_release_serves_the_suite_too(tmp_path: Path) -> None:
    root = apt_dir(tmp_path, {"sources.list": "deb http://newer.invalid/debian trixie main\n"})
    debian = tmp_path / "os-release-debian"
    debian.write_text('PRETTY_NAME="Debian GNU/Linux 13"\nID=debian\n')
    assert debian_mirror(None, root, debian) == "http://newer.invalid/debian"
    # Not a Debian host (Ubuntu says ID_LIKE=debian): its mirror does not serve Debian.
    ubuntu = tmp_path / "os-release-ubuntu"
    ubuntu.write_text("ID=ubuntu\nID_LIKE=debian\n")
    with pytest.raises(ImageError, match="JUDGE_SANDBOX__IMAGE_MIRROR"):
        debian_mirror(None, root, ubuntu)


def test_no_source_at_all_says_what_to_set(tmp_path: Path) -> None:
    with pytest.raises(ImageError, match=f"Debian {DEBIAN_SUITE}.*image_mirror under"):
        debian_mirror(None, tmp_path / "no-apt", tmp_path / "no-os-release")


@pytest.mark.skipif(shutil.which("apt-get") is None, reason="no apt on this machine")
def test_this_machine_gives_the_mirror_apt_itself_reads() -> None:
    """apt's own reading of the real /etc/apt: the first source of the suite's main packages."""
    listed = subprocess.run(
        ["apt-get", "indextargets", "--format", "$(SITE) $(RELEASE) $(COMPONENT)", "Created-By: Packages"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    sites = [line.split()[0] for line in listed if line.split()[1:] == [DEBIAN_SUITE, "main"]]
    if not sites:
        pytest.skip(f"this machine's apt has no {DEBIAN_SUITE} main source")
    assert debian_mirror() == sites[0].rstrip("/")
