"""The verdict cache carried to another machine: ``sysmobench cache export`` on one, ``import``
on the other, and the re-run there runs no tool; an archive that is not one is refused, and one
that names paths outside the cache, links or junk has those skipped."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from projects import benchmark_project

from pytest_sysmobench.cli import main


def _run(pytester: pytest.Pytester, cache: Path) -> pytest.RunResult:
    result = pytester.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "-m", "p1 or p2", "-k", "spin",
                                           "--sysmobench-cache", str(cache))
    result.assert_outcomes(passed=2, deselected=2)
    return result


def test_an_exported_cache_makes_another_machine_warm(pytester: pytest.Pytester,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    benchmark_project(pytester, "spin")
    here, there = pytester.path / "cache-here", pytester.path / "cache-there"
    cold = _run(pytester, here)
    cold.stdout.fnmatch_lines(["tool runs: * SANY, * TLC; *"])
    archive = pytester.path / "verdicts.tar.gz"
    capsys.readouterr()
    assert main(["cache", "export", str(archive), "--cache", str(here)]) == 0
    exported = int(capsys.readouterr().out.split("exported ")[1].split()[0])
    assert exported >= 2
    assert main(["cache", "import", str(archive), "--cache", str(there)]) == 0
    assert f"imported {exported} verdict(s) into {there} (0 already there)" in capsys.readouterr().out
    assert (there / "secret").read_text() == (here / "secret").read_text()
    warm = _run(pytester, there)
    warm.stdout.fnmatch_lines(["tool runs: 0 SANY, 0 TLC; * answered from cache"])
    assert main(["cache", "import", str(archive), "--cache", str(there)]) == 0  # again: nothing overwritten
    assert f"imported 0 verdict(s) into {there} ({exported} already there)" in capsys.readouterr().out


def _tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes]]) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for info, data in members:
            info.size = len(data) if info.isfile() else 0
            archive.addfile(info, io.BytesIO(data) if info.isfile() else None)
    return path


def _file(name: str) -> tarfile.TarInfo:
    return tarfile.TarInfo(name)


def test_a_hostile_or_foreign_archive_is_contained(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache = tmp_path / "cache"
    key = "ab" + "0" * 62
    manifest = json.dumps({"format": "sysmobench-cache-v1", "entries": 1}).encode()
    link = tarfile.TarInfo(f"tlc/ab/{'1' * 64}.json")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    hostile = _tar(tmp_path / "hostile.tar.gz", [
        (_file("MANIFEST.json"), manifest), (_file(f"tlc/ab/{key}.json"), b'{"ok": true}'),
        (_file("../outside.json"), b"{}"), (_file("/abs/ab/x.json"), b"{}"), (link, b""),
        (_file(f"sany/cd/{'c' * 64}.json"), b"not json"), (_file("secret"), b"zz")])
    assert main(["cache", "import", str(hostile), "--cache", str(cache)]) == 0
    out = capsys.readouterr().out
    assert "imported 1 verdict(s)" in out and "skipped 5 member(s)" in out
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()) == [
        f"cache/tlc/ab/{key}.json", "hostile.tar.gz"]
    foreign = _tar(tmp_path / "foreign.tar.gz", [(_file(f"tlc/ab/{key}.json"), b"{}")])
    assert main(["cache", "import", str(foreign), "--cache", str(cache)]) == 2
    assert "not a cache archive made by 'sysmobench cache export'" in capsys.readouterr().err
    (tmp_path / "junk.tar.gz").write_bytes(b"\x00" * 10)
    assert main(["cache", "import", str(tmp_path / "junk.tar.gz"), "--cache", str(cache)]) == 2
    assert "not a cache archive" in capsys.readouterr().err
    assert main(["cache", "export", str(tmp_path / "x.tar.gz"), "--cache", str(tmp_path / "none")]) == 2
    assert "no cache here" in capsys.readouterr().err


def _valid_archive(folder: Path) -> bytes:
    key = "ab" + "0" * 62
    entries = [(_file(f"tlc/ab/{key[:-1]}{i}.json"), json.dumps({"verdict": "OK", "n": i}).encode()) for i in range(3)]
    manifest = json.dumps({"format": "sysmobench-cache-v1", "entries": 3}).encode()
    return _tar(folder / "valid.tar.gz", [(_file("MANIFEST.json"), manifest), *entries]).read_bytes()


def test_a_truncated_archive_or_a_utf16_entry_is_an_error_message_not_a_traceback(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    whole = _valid_archive(tmp_path)
    (tmp_path / "cut.tar.gz").write_bytes(whole[: len(whole) * 2 // 3])
    assert main(["cache", "import", str(tmp_path / "cut.tar.gz"), "--cache", str(tmp_path / "c1")]) == 2
    assert "truncated or corrupted" in capsys.readouterr().err
    manifest = json.dumps({"format": "sysmobench-cache-v1", "entries": 1}).encode()
    utf16 = _tar(tmp_path / "utf16.tar.gz", [(_file("MANIFEST.json"), manifest),
                                             (_file(f"tlc/ab/{'0' * 64}.json"), '{"ok": true}'.encode("utf-16"))])
    assert main(["cache", "import", str(utf16), "--cache", str(tmp_path / "c2")]) == 0
    assert "imported 0 verdict(s)" in capsys.readouterr().out and not list((tmp_path / "c2").rglob("*.json"))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_no_corruption_of_an_archive_makes_the_cli_print_a_traceback(tmp_path: Path, data: st.DataObject,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Cut anywhere, bytes flipped anywhere: exit 0 (what could be read was) or 2 with a message."""
    whole = bytearray(_valid_archive(tmp_path))
    cut = data.draw(st.integers(0, len(whole)))
    flips = data.draw(st.lists(st.tuples(st.integers(0, len(whole) - 1), st.integers(1, 255)), max_size=4))
    for at, mask in flips:
        whole[at] ^= mask
    given_ = tmp_path / "given.tar.gz"
    given_.write_bytes(bytes(whole[:cut]))
    code = main(["cache", "import", str(given_), "--cache", str(tmp_path / "cache")])
    captured = capsys.readouterr()
    assert code in (0, 2) and "Traceback" not in captured.err
    assert code == 0 or captured.err.startswith("error: ")
