"""simd.engine.kernels and simd.offline.precompile: compiling ahead of use compiles what real runs use.

A unit's workload must compile exactly the signatures the engine's paths call the kernels with; a miss is not
wrong (numba compiles it on first use) but puts the compiler back on the daemon's tick and in simulate's run.
Checked in a fresh process on the suite's kernel cache, recording every kernel numba compiles (its compile
events) or loads from the cache (its dispatchers' cache hits), so the check is the same whether the cache
already holds the kernels (as when scripts/test.sh compiled them before the tests) or is empty: after
``warm(units_for(spec))`` a job of ``spec`` compiles and loads nothing, for every kind of scenario; after
warming every unit, the daemon's ticks over the embedded configuration (drills included), a sweep's shared
windows and the replica path compile and load nothing either.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from support.promstack import ROOT

from simd import kernelcache
from simd.engine import kernels
from simd.scenario import default_config

SCRIPT = textwrap.dedent('''
    import gc, os, sys, tempfile, time
    os.environ["NUMBA_CACHE_DIR"] = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()
    from numba.core import event
    from numba.core.dispatcher import Dispatcher
    from simd.offline import precompile
    from simd.scenario import default_config
    from simd.engine import kernels
    from simd.engine.core import run_job

    def loads():
        """(dispatcher, signature) -> loads from the cache so far, for every kernel of the process."""
        return {(d, sig): n for d in gc.get_objects() if isinstance(d, Dispatcher)
                for sig, n in d.stats.cache_hits.items()}

    def compiled_during(fn):
        """The kernels numba compiled or loaded from the cache while ``fn`` ran."""
        before = loads()
        with event.install_recorder("numba:compile") as rec:
            fn()
        loaded = {d.py_func.__qualname__ for (d, sig), n in loads().items() if n > before.get((d, sig), 0)}
        return sorted(loaded | {e.data["dispatcher"].py_func.__qualname__ for _, e in rec.buffer if e.is_start})

    from dataclasses import replace
    from simd.engine import Stragglers
    config = default_config()
    cases = [(s.name, s.job_spec(s.seed)) for s in config.all_scenarios]
    # hyper-checkpointing, committed SDCs and fleets under stragglers: no default scenario has them
    slow = Stragglers(jitter_seconds=2.0, slow_ranks=2, slowdown=1.5, replace_after_steps=300)
    for name in ("optimized-fleet", "optimized-hyper", "optimized-layered-sdc"):
        cases.append((name + "+stragglers", replace(config.scenario(name).job_spec(), stragglers=slow)))
    for name, spec in cases:
        precompile.warm(kernels.units_for(spec))
        extra = compiled_during(lambda: run_job(spec))
        print(f"{name}: {kernels.units_for(spec)} then {extra}")
        assert not extra, (name, extra)

    precompile.warm(kernels.UNITS)

    def daemon():
        from support.daemon import FakeClock
        from simd.daemon.process import assemble
        clock = FakeClock(0.0)
        ticker, _ = assemble(config, clock=clock, wall=lambda: 1.7e9)
        for t, drills in ((1.0, ()), (5.0, ("straggler", "slow-storage", "sdc-burst", "failure-storm")), (60.0, ())):
            clock.t = t
            ticker.tick()
            for d in drills:
                ticker.start_drill(d)
        assert not any(sc.failed for sc in ticker.snapshot.scenarios)

    def sweep():
        from simd.offline.sweep import run as sw
        from simd.offline.sweep.grid import grid, parse_params
        points = grid(config.scenario("llama3-16k"), parse_params(["checkpoint.interval_steps=100,200"]))
        sw.run_points([p.scenario for p in points], [0, 1])

    for name, fn in (("daemon", daemon), ("sweep", sweep)):
        extra = compiled_during(fn)
        print(f"{name} after every unit: {extra}")
        assert not extra, (name, extra)
    print("OK")
''')


@pytest.mark.integration  # a real process
def test_warmed_units_leave_nothing_to_compile():
    cache = kernelcache.current()
    r = subprocess.run([sys.executable, "-c", SCRIPT, *([cache.path] if cache.enabled else [])], capture_output=True,
                       text=True, timeout=900, cwd=ROOT, env={"PYTHONPATH": f"{ROOT}:{ROOT / 'tests'}",
                                                             "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0 and r.stdout.rstrip().endswith("OK"), r.stdout + r.stderr[-3000:]


def test_units_of_the_default_scenarios():
    """Every kind of scenario runs on the one kernel (issue 20: there were a replica kernel for plain plans and
    an extended one for hyper-checkpointing, committed SDCs, shadow ranks and fleets)."""
    units = {s.name: kernels.units_for(s.job_spec(s.seed)) for s in default_config().all_scenarios}
    assert set(units.values()) == {("loop",)}  # every mechanism on the one loop


def test_an_unknown_unit_is_refused():
    from simd.offline import precompile

    with pytest.raises(ValueError, match="no kernel unit 'nope' .known: loop, crn"):
        precompile.warm(["nope"])
    with pytest.raises(ValueError, match="no kernel unit"):
        kernels.run_unit("nope")


def test_simd_compile_refuses_an_unknown_unit_naming_the_units():
    r = subprocess.run([sys.executable, "-m", "simd", "compile", "--unit", "nope"], capture_output=True, text=True,
                       cwd=ROOT, timeout=60)
    assert r.returncode == 2
    assert r.stderr == "simd compile: error: --unit: no unit 'nope' (known: loop, crn)\n"


def test_the_sweeps_windows_call_the_loop_with_its_own_signature():
    """The sweeps' windows (``crn``) call the loop with the signature of the engine's other calls (a window without
    steps there): after both units' workloads numba's cache holds loop.advance_all compiled once for this CPU, so
    ``crn`` compiles only its own kernels after ``loop`` (a second signature is a second whole compile of the loop,
    ~45 s of CPU from cold). Read from the cache's index, as precompile.in_cache reads it (a kernel that calls
    another and is loaded from the cache does not show the callee's signature in its dispatcher)."""
    from simd.engine import loop

    if not kernels.compiled() or not kernelcache.current().enabled:
        pytest.skip("no kernel cache to read (NUMBA_DISABLE_JIT=1, or the cache is off)")
    for unit in kernels.UNITS:
        kernels.run_unit(unit)
    d = loop.advance_all
    magic = d.targetctx.codegen().magic_tuple()
    signatures = {key[0] for key in d._cache._cache_file._load_index() if key[1] == magic}
    assert len(signatures) == 1, signatures


def test_a_unit_that_needs_another_is_compiled_after_it_not_beside_it(monkeypatch):
    """warm compiles the cold units but the first in child processes, except a unit that needs another cold one
    (kernels.NEEDS: ``crn`` calls ``loop``'s kernel): that one is compiled in this process after it, since a child
    would compile the other unit's kernels again. Checked with the compiles and processes recorded, not run."""
    import types

    from simd.offline import precompile

    ran, started = [], []

    class Process:
        def __init__(self, target, args, **_):
            self.unit, self.exitcode = args[0], 0

        def start(self):
            started.append(self.unit)

        def join(self):
            pass

    monkeypatch.setattr(precompile, "_compiled", set())
    monkeypatch.setattr(precompile, "in_cache", lambda unit: False)
    monkeypatch.setattr(precompile, "_init_numba", lambda: None)
    monkeypatch.setattr(precompile.kernelcache, "current", lambda: types.SimpleNamespace(enabled=True))
    monkeypatch.setattr(precompile.multiprocessing, "get_context", lambda method: types.SimpleNamespace(
        Process=Process))
    monkeypatch.setattr(precompile.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(kernels, "compiled", lambda: True)
    monkeypatch.setattr(kernels, "run_unit", ran.append)
    precompile.warm(["crn", "loop"])
    assert (started, ran) == ([], ["loop", "crn"])
    # a unit that needs none of the cold ones still compiles beside them
    monkeypatch.setattr(precompile, "_compiled", set())
    monkeypatch.setattr(kernels, "UNITS", (*kernels.UNITS, "other"))
    ran.clear()
    precompile.warm(["crn", "loop", "other"])
    assert (started, ran) == (["other"], ["loop", "crn", "other"])


def test_a_first_run_says_it_compiles_before_it_does(monkeypatch, capsys):
    """A first run on a machine compiles for a minute: a line says so before (a silent minute reads as a hang),
    another how long it took after; a run that finds the kernels cached says nothing. (The compile faked.)"""
    from simd.offline import precompile

    spec = default_config().all_scenarios[0].job_spec(0)
    before = []

    def warm(units):
        before.append(capsys.readouterr().err)
        return {u: 61.5 if cold else 0.3 for u in units}

    monkeypatch.setattr(precompile, "warm", warm)
    for cold in (True, False):
        monkeypatch.setattr(precompile, "in_cache", lambda unit, cold=cold: not cold)
        precompile.prepare([spec], prog="simd simulate")
    after = capsys.readouterr().err
    assert before[0] == "simd simulate: compiling the engine's kernels (loop): a minute or so, once per machine\n"
    assert before[1].startswith("simd simulate: compiled the engine's kernels (loop) in 61.5 s, once per machine")
    assert before[1].count("\n") == 1 and after == ""  # (before[1]: what the first run said after its compile)
