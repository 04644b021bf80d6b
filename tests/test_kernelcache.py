"""simd.kernelcache: where the compiled kernels go, chosen before numba needs a place.

The tests run as root here, and root can write into a read-only directory, so which directories count as
writable is decided by a stand-in for ``writable``; the real thing (uid 65534 on a read-only root file system)
is tests/daemon/test_image_way.py's.
"""

from __future__ import annotations

import os
import time

import pytest

from simd import kernelcache


@pytest.fixture
def only(monkeypatch):
    """``only(*dirs)``: exactly these directories (and those below them) are writable."""

    def set_(*dirs):
        allowed = [str(d) for d in dirs]

        def writable(path):
            ok = any(str(path) == a or str(path).startswith(a + os.sep) for a in allowed)
            if ok:
                os.makedirs(path, exist_ok=True)
            return ok

        monkeypatch.setattr(kernelcache, "writable", writable)

    return set_


def test_numba_cache_dir_first_when_writable(tmp_path, only):
    only(tmp_path)
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "given"), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    assert kernelcache.choose(str(tmp_path / "state"), env) == kernelcache.Choice("env", str(tmp_path / "given"))


def test_then_the_state_dir_then_xdg(tmp_path, only):
    only(tmp_path)
    env = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    assert kernelcache.choose(str(tmp_path / "state"), env) == kernelcache.Choice(
        "state-dir", str(tmp_path / "state" / "kernel-cache"))
    assert kernelcache.choose(None, env) == kernelcache.Choice("xdg", str(tmp_path / "xdg" / "simd" / "kernels"))


def test_home_without_xdg_is_the_default_cache_home(tmp_path, only, monkeypatch):
    only(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert kernelcache.choose(None, {}).path == str(tmp_path / "home" / ".cache" / "simd" / "kernels")


def test_nothing_writable_but_a_temporary_directory(tmp_path, only, monkeypatch):
    only()  # NUMBA_CACHE_DIR, the state directory and HOME all read-only (the image's user: HOME=/nonexistent)
    made = []
    monkeypatch.setattr(kernelcache.tempfile, "mkdtemp", lambda prefix: made.append(prefix) or str(tmp_path / "t"))
    c = kernelcache.choose(str(tmp_path / "state"), {"HOME": "/nonexistent"})
    assert c == kernelcache.Choice("tmp", str(tmp_path / "t")) and made == ["simd-kernels-"]
    assert "removed at exit" in c.describe()


def test_not_even_a_temporary_directory_runs_uncached(tmp_path, only, monkeypatch):
    only()

    def no_tmp(prefix):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(kernelcache.tempfile, "mkdtemp", no_tmp)
    c = kernelcache.choose(None, {})
    assert c == kernelcache.Choice("off", None) and not c.enabled
    assert c.describe().startswith("off: no writable directory")


def test_the_switch_turns_it_off(tmp_path, only):
    only(tmp_path)
    c = kernelcache.choose(None, {"SIMD_KERNEL_CACHE": "off", "NUMBA_CACHE_DIR": str(tmp_path)})
    assert c.source == "off-by-switch" and not c.enabled


def test_a_read_only_numba_cache_dir_seeds_the_writable_choice(tmp_path, only):
    seed = tmp_path / "image"
    (seed / "engine_abc").mkdir(parents=True)
    (seed / "engine_abc" / "replkernel.advance_all-107.py311.nbi").write_bytes(b"index")
    (seed / "engine_abc" / "replkernel.advance_all-107.py311.1.nbc").write_bytes(b"code")
    state = tmp_path / "state"
    only(state)
    c = kernelcache.choose(str(state), {"NUMBA_CACHE_DIR": str(seed)})
    assert c.source == "state-dir" and c.seeded_from == str(seed)
    copied = state / "kernel-cache" / "engine_abc"
    assert (copied / "replkernel.advance_all-107.py311.nbi").read_bytes() == b"index"
    assert (copied / "replkernel.advance_all-107.py311.1.nbc").read_bytes() == b"code"
    assert f"seeded from the read-only {seed}" in c.describe()

    # a later start: what was compiled here since (newer than the seed) stays; a newer seed (a rebuilt image)
    # replaces what is older
    (copied / "replkernel.advance_all-107.py311.nbi").write_bytes(b"index with this CPU's entry")
    old = time.time() - 3600
    os.utime(seed / "engine_abc" / "replkernel.advance_all-107.py311.nbi", (old, old))
    os.utime(copied / "replkernel.advance_all-107.py311.1.nbc", (old, old))
    (seed / "engine_abc" / "replkernel.advance_all-107.py311.1.nbc").write_bytes(b"new code")
    kernelcache.choose(str(state), {"NUMBA_CACHE_DIR": str(seed)})
    assert (copied / "replkernel.advance_all-107.py311.nbi").read_bytes() == b"index with this CPU's entry"
    assert (copied / "replkernel.advance_all-107.py311.1.nbc").read_bytes() == b"new code"


def test_the_real_writable_check(tmp_path):
    assert kernelcache.writable(str(tmp_path / "a" / "b"))
    (tmp_path / "file").write_text("")
    assert not kernelcache.writable(str(tmp_path / "file" / "below"))


def test_this_process_chose_once_and_told_numba_and_children():
    """The test session's own choice (made when the first kernel was defined): in the environment, for worker
    processes, and in numba's configuration."""
    import numba

    c = kernelcache.current()
    assert kernelcache.configure("/somewhere/else") is c  # later calls keep the first choice
    if c.enabled:
        assert os.environ["NUMBA_CACHE_DIR"] == c.path == numba.config.CACHE_DIR
    else:
        assert os.environ["SIMD_KERNEL_CACHE"] == "off"


@pytest.mark.parametrize("given,expected", [(None, "1"), ("3", "3")])
def test_llvm_optimises_at_level_1_unless_the_user_says(given, expected):
    """simd sets NUMBA_OPT=1 before numba is imported (kernelcache's docstring: as fast, ~2 s less to compile);
    a NUMBA_OPT in the environment wins. Checked in a fresh process: numba reads it when imported."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "NUMBA_OPT"}
    if given is not None:
        env["NUMBA_OPT"] = given
    code = "import simd.engine.jit, numba.core.config as c, os; print(os.environ['NUMBA_OPT'], int(c.OPT))"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == [expected, expected]


def test_an_entry_is_stale_when_any_engine_source_changes(tmp_path, monkeypatch):
    """numba checks a cached kernel against its own file only; simd's locator against every engine source, so
    editing a callee in another file (kernel/draws.py under loop.py's loop) recompiles instead of running the
    old code. The locator is the one numba uses for simd's kernels."""
    from simd import kernellocator
    from simd.engine import loop

    locator = loop.advance_all._cache._impl.locator  # numba's internals (pinned to 0.68)
    assert isinstance(locator, kernellocator.EngineCacheLocator)
    assert locator.get_source_stamp()[1] == kernellocator.engine_digest()
    (tmp_path / "kernel").mkdir()
    (tmp_path / "loop.py").write_text("loop\n")
    (tmp_path / "kernel" / "draws.py").write_text("callee\n")
    monkeypatch.setattr(kernellocator, "ENGINE", tmp_path)
    kernellocator.engine_digest.cache_clear()
    before = kernellocator.engine_digest()
    (tmp_path / "kernel" / "draws.py").write_text("callee, edited\n")
    kernellocator.engine_digest.cache_clear()
    assert kernellocator.engine_digest() != before
    kernellocator.engine_digest.cache_clear()


@pytest.mark.parametrize("given", [None, "numba.core.caching.UserProvidedCacheLocator"])
def test_the_engine_locator_is_named_to_numba_unless_the_user_names_one(given, tmp_path):
    """simd names its locator (simd.kernellocator) in NUMBA_CACHE_LOCATOR_CLASSES when it gives numba a cache
    directory; a locator the environment names already wins. Checked in a fresh process."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_LOCATOR_CLASSES", "SIMD_KERNEL_CACHE")}
    env["NUMBA_CACHE_DIR"] = str(tmp_path)
    if given is not None:
        env["NUMBA_CACHE_LOCATOR_CLASSES"] = given
    code = "import simd.engine.loop, os; print(os.environ['NUMBA_CACHE_LOCATOR_CLASSES'])"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == (given or "simd.kernellocator.EngineCacheLocator")


def test_a_state_directorys_new_cache_is_seeded_from_the_xdg_cache(tmp_path, only):
    """What `simd simulate` compiled into the XDG cache directory: a daemon's first start with --state-dir copies
    it into its own cache (no second compile); a read-only NUMBA_CACHE_DIR, the image's, still comes first."""
    xdg = tmp_path / "xdg" / "simd" / "kernels" / "engine_abc"
    xdg.mkdir(parents=True)
    (xdg / "loop.advance_all-1.py311.nbi").write_bytes(b"index")
    only(tmp_path)
    env = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    c = kernelcache.choose(str(tmp_path / "state"), env)
    assert (c.source, c.seeded_from, c.seeded_from_xdg) == ("state-dir", str(xdg.parent), True)
    copied = tmp_path / "state" / "kernel-cache" / "engine_abc" / "loop.advance_all-1.py311.nbi"
    assert copied.read_bytes() == b"index"
    assert c.describe().endswith(f"(under --state-dir; seeded from {xdg.parent}, the XDG cache directory)")
    assert kernelcache.choose(None, env) == kernelcache.Choice("xdg", str(xdg.parent))  # itself: nothing to copy
    image = tmp_path / "image"
    image.mkdir()
    only(tmp_path / "state", tmp_path / "xdg")  # the image's directory read-only
    c = kernelcache.choose(str(tmp_path / "state"), {**env, "NUMBA_CACHE_DIR": str(image)})
    assert (c.seeded_from, c.seeded_from_xdg) == (str(image), False)
