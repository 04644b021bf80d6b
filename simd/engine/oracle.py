"""The engine's oracle: seed 000's per-step loop with every mechanism simd models, in one loop written for
reading. It is O(steps): tests compare the event-driven engine with it, and bench/engine.py times it.

The seed's ``TrainingSimulator.run`` (quoted in the seed) with ``random.Random(seed)``: per executed step, in
this order, with one draw each unless said otherwise:

(a) hard failure: one Bernoulli per accelerator type (fleet.py; one type without a fleet), over the type's
    GPUs plus the shadow ranks' duplicates (shadow.py); with servers (servers.py), one Bernoulli per server
    instead, with the conditional hazard of its lifetime at its age (``_Servers``): the job stops once, every
    server that failed starts a new lifetime. When several types fail in one step, the remaining
    types' Bernoullis and each failed type's first failure time within the step are drawn and the earliest is
    charged (``_FirstFailure``). Then its cause (one more draw, only with several causes), which sets its
    detection and restart time. Roll back to the newest checkpoint; an SDC not yet in a checkpoint goes with
    the rolled-back steps, one a checkpoint holds (committed SDCs, late.py) survives.
(a') shadow disagreement (with shadow ranks): one Bernoulli over the 2k GPUs of shadowed ranks, found at the
    end of its step: an SDC detection, handled as a hard failure that costs ``restart_seconds`` only.
(b) SDC onset, if none is present: one Bernoulli per type over the unshadowed GPUs (as (a)); with committed
    SDCs, each detector's coverage and latency are drawn (``random.Random``'s own expovariate, lognormvariate,
    uniform: not the engine's inverse transforms).
(b') the first detector's finding due by the end of the step: roll back to the newest checkpoint older than
    the onset (to the oldest retained one, the SDC accepted, if that one is gone).
(c) validation point: an SDC in no checkpoint is detected.
(d) checkpoint point (on the hyper lattice while a hyper window is open, hyper.py): an SDC present is baked in
    and rolled back (seed 000's semantics) or, with committed SDCs, committed with the checkpoint. With
    asynchronous saves (``write_us``; docs/model.md, "Asynchronous saves") the point first waits for the write in
    flight (which makes it durable), blocks for the snapshot, and starts a write: the save is durable before the
    first step that starts at or after the write's end, the steps before it slowed by ``write_slow_ppm``; every
    rollback aborts it; the job's end waits for it.

Elastic replica groups (docs/model.md): at each step's start the groups whose rejoin time has come run again; the
step's compute is productive in the running groups' share, the rest and the mode's overhead degraded; a hard failure
(a) of an elastic cause with more than the minimum running drops its group instead of rolling back (the step's work
lost and run again, the cause's detection paid), and any rollback brings every group back. With servers
(``_Servers.drop``) a failure drops every group its failed servers are in, the failed servers are replaced from the
pools as for a restart (a misdiagnosis's scapegoat drawn in the group), each group rejoins ``rejoin_us`` after its
last replacement is ready, its servers out meanwhile (they neither age nor fail) and new when it rejoins; a rollback
brings every group back and waits for their replacements (waiting bucket).

Every SDC detection ((a'), (b'), (c), (d) baked) rolls back, pays ``restart_seconds`` and, with
hyper-checkpointing, opens a window of ``window_steps`` executed steps anchored at the rollback point. Every
rollback ((a), (a'), (b'), (c), (d) baked) to a checkpoint at a step > 0 also pays its load
(``ckpt_load_seconds``, in the restart bucket); one to the job's start (step 0) loads nothing. At the
end of the job an SDC still present is baked in, and its steps since the newest clean checkpoint are void.

Time is integer microseconds, rounded as the engine rounds (its Plan), and every step lasts what the engine's
step-time sampler gives executed step g (stragglers.py: a pure function of g and the seed), shadow overhead
added, so a detector's latency and the end of a step compare as in the engine.
"""

from __future__ import annotations

import math
import random
from bisect import bisect_left

from simd.engine import servers as srv
from simd.engine.hazard import NEVER, per_step_cluster_hazard
from simd.engine.late import DISTRIBUTIONS
from simd.engine.shadow import shadow_ranks
from simd.engine.spec import US_PER_SECOND, JobSpec, Plan, compile_spec

_BLOCK = 1 << 16  # step durations drawn per call of the sampler
_AHEAD = 64  # ages a server's hazard table is filled ahead of the one asked for (chosen: a miss per 64 ages of a
# server, where its own table under gamma multipliers missed at every step; at most 64 ages tabulated in vain)


def oracle_run(spec: JobSpec, *, seed: int | None = None) -> dict:
    """Run one job step by step (module docstring); its totals as a dict of plain numbers."""
    rng = random.Random(spec.seed if seed is None else seed)
    plan = compile_spec(spec, oracle=True)
    k = shadow_ranks(spec.n_gpus, spec.shadow)  # 0 without shadow ranks
    types = spec.accelerator_list
    hard = _FirstFailure(rng, [(a.count + k, a.hard_per_gpu_hour) for a in types], spec.step_seconds)
    sdc = _FirstFailure(rng, [(a.count - k, a.sdc_per_gpu_hour) for a in types], spec.step_seconds)
    disagree = per_step_cluster_hazard(spec.sdc_per_gpu_hour, 2 * k, spec.step_seconds) if k else 0.0
    causes, cumulative = spec.cause_list, plan.cause_cumulative
    durations = _StepDurations(plan)
    servers = _Servers(plan, rng) if plan.servers else None
    target, vi, ci = plan.target, plan.val_every, plan.ckpt_every
    hi = spec.hyper.interval_steps if spec.hyper else 0
    window = spec.hyper.window_steps if spec.hyper else 0
    committed = spec.committed_sdc is not None
    detectors = spec.committed_sdc.detectors if committed else ()
    retention = plan.retention  # the checkpoints kept (committed SDCs' or, with corrupt loads, the job's)
    write_us, slow_ppm, p_fail, p_corrupt = plan.write_us, plan.write_slow_ppm, plan.save_fail, plan.corrupt_load
    M = plan.mem_every  # a memory tier's interval (0: none)
    # the memory tiers, the one under the persistent checkpoint first (with two, a local tier under a peer tier)
    tiers = [_Tier(t, *fields) for t, fields in (
        (spec.tier, (plan.mem_every, plan.mem_us, plan.mem_load_us, plan.mem_corrupt, plan.mem_save_fail,
                     plan.mem_write_us, plan.mem_keep)),
        (spec.lower_tier, (plan.low_every, plan.low_us, plan.low_load_us, plan.low_corrupt, plan.low_save_fail,
                           plan.low_write_us, plan.low_keep))) if t is not None]

    c = dict.fromkeys(("interruptions", "sdc_detected", "sdc_baked", "sdc_onsets", "shadow_detected", "recompute",
                       "final_void", "late", "lost", "unrecoverable", "activations", "hyper_steps",
                       "server_failures", "checkpoints", "aborted", "failed", "loads_corrupt",
                       "fallbacks_to_start", "rec_persistent", "rec_start", "jit", "inproc_ok", "inproc_failed",
                       "escalations", "migrations", "no_standby", "drops", "rejoins"), 0)
    us = dict.fromkeys(("ckpt", "val", "restart", "detect", "waiting", "write", "wait", "load", "degraded",
                        "productive"), 0)
    by_cause = dict.fromkeys((x.name for x in causes), 0)
    attempts_by_cause = dict.fromkeys((x.name for x in causes), 0)  # the causes' restarts attempted
    migrating = any(x.predicted > 0 for x in causes)  # live migration (on servers with warm standbys)
    coming, coming_cause = [], None
    hard_by_type, onsets_by_type = [0] * len(types), [0] * len(types)
    found_by = dict.fromkeys((d.name for d in detectors), 0)

    t = g = 0  # simulated time (us), executed steps
    cur = last = clean = 0  # the job's step, its newest checkpoint, its newest checkpoint without the SDC
    corrupted = False
    deadline, det = NEVER, 0  # when the first detector to find the present SDC does, and which one
    n_corrupt, corrupt = 0, []  # checkpoints holding the present SDC; the newest ``retention`` of them
    hyper_end = anchor = 0  # executed steps g + 1 .. hyper_end checkpoint on the lattice anchor + j * hi
    wend = wstep = 0  # an asynchronous save in flight: when its write ends (0: none), its job step
    wsdc = wfail = False  # ... whether it holds the present SDC (committed SDCs), whether it fails
    # with corrupt loads: the newest ``retention`` durable checkpoints, oldest first: (job step, whether it holds the
    # present SDC: committed SDCs)
    kept: list[tuple[int, bool]] = []
    # ... and whether it has held ``retention`` since the job was last at step 0: the job's start then no longer counts
    # as a kept clean checkpoint (a corrupt one dropped since does not bring it back)
    filled = False
    plast = 0  # with a memory tier: the newest durable persistent checkpoint (``last``: the newest of either tier)
    # with a memory tier and committed SDCs: the newest clean persistent checkpoint
    pclean = 0
    # elastic replica groups (docs/model.md, "Elastic replica groups"; E 0: none): the groups, those out as (rejoin
    # time, group, when its last replacement is ready: with servers); the productive share of the uncommitted steps'
    # compute (each step's by the groups that ran it); with servers, when a restart's groups back are staffed
    E, rejoins, pend = plan.elastic_groups, [], 0
    staffed = 0

    def held() -> bool:
        """Whether a checkpoint of either tier holds the present SDC (committed SDCs)."""
        return n_corrupt > 0 or any(h for x in tiers for _, h in x.ring)

    def tier_chain(above: int, clean_only: bool = False) -> tuple[int, int, _Tier | None]:
        """The memory tiers' copies newer than ``above`` (with ``clean_only``, those without the present SDC), newest
        first, loaded in turn: each load pays its tier's load, a copy found corrupt is dropped. A tier's copies older
        than the newest copy of a tier above it (with ``clean_only``, its newest clean copy) are not among them (that
        copy stands for them, as the persistent checkpoint for a tier's), so the lowest tier's newer copies come
        first, then the next one's. (The step of the one that loads, 0: none; the loads' time; its tier.)"""
        paid = 0
        for j in range(len(tiers) - 1, -1, -1):
            x, bound = tiers[j], max([above] + [y.newest(clean_only) for y in tiers[:j]])
            ring, i = x.ring, len(x.ring) - 1
            while i >= 0 and ring[i][0] > bound:
                if not (clean_only and ring[i][1]):
                    paid += x.load_us
                    if not tier_corrupt(x):
                        return ring[i][0], paid, x
                    del ring[i]
                i -= 1
        return 0, paid, None

    def keep(step: int, holds: bool = False) -> None:
        nonlocal filled
        if p_corrupt:
            kept.append((step, holds))
            del kept[:-retention]
            filled = filled or len(kept) == retention

    def fallback() -> tuple[int, int, int]:
        """With corrupt loads: the newest kept checkpoint that loads, each load found corrupt with its probability
        and dropped (the next older one tried); none: the job's start. (The step recovered to, the loads paid, the
        checkpoints dropped that held the present SDC.)"""
        loads = held_gone = 0
        while kept:
            loads += 1
            if rng.random() < p_corrupt:
                held_gone += kept.pop()[1]
                c["loads_corrupt"] += 1
                continue
            return kept[-1][0], loads, held_gone
        c["fallbacks_to_start"] += loads > 0
        return 0, loads, held_gone

    def late_fallback() -> tuple[int, int]:
        """Committed SDCs with corrupt loads, a late find (docs/model.md, "Checkpoints kept and found corrupt"): while
        a clean checkpoint is kept (the job's start counting as one until ``retention`` were kept at once since the
        job was last at step 0: ``filled``; with none kept, all there is), the kept ones older than the onset, newest
        first, down to the job's start (the checkpoints holding the SDC discarded); else (unrecoverable) the kept
        ones, oldest first, the SDC accepted, down to the job's start too; each load found corrupt dropped. (The step
        recovered to, the loads paid.)"""
        loads = 0
        if not kept or (len(kept) < retention and not filled) or not kept[0][1]:
            c["lost"] += n_corrupt
            while kept:
                if kept[-1][1]:  # (holding the SDC: discarded, not loaded)
                    kept.pop()
                    continue
                loads += 1
                if rng.random() >= p_corrupt:
                    break
                kept.pop()
                c["loads_corrupt"] += 1
            to = kept[-1][0] if kept else 0
        else:
            c["unrecoverable"] += 1
            while kept:
                loads += 1
                if rng.random() >= p_corrupt:
                    break
                kept.pop(0)
                c["loads_corrupt"] += 1
            to = kept[0][0] if kept else 0
            c["lost"] += max(len(kept) - 1, 0)
            del kept[1:]
        c["fallbacks_to_start"] += to == 0 and loads > 0
        return to, loads

    def durable() -> None:
        """The save in flight is written: a rollback target (and, holding the present SDC, a committed one); with a
        memory tier the newest persistent checkpoint (a memory checkpoint saved while it wrote may be newer)."""
        nonlocal wend, last, clean, n_corrupt, plast, pclean
        if wfail:  # its write failed: no rollback target
            c["failed"] += 1
            wend = 0
            return
        c["checkpoints"] += 1
        if wsdc:
            c["sdc_baked"] += not held()
            n_corrupt += 1
            corrupt.append(wstep)
            del corrupt[:-retention]
            keep(wstep, True)
            last = max(last, wstep)  # (a memory checkpoint saved while it wrote may be newer)
            plast = wstep
        else:
            last, clean = max(last, wstep), max(clean, wstep)
            plast = pclean = wstep
            keep(wstep)
        wend = 0

    def wait_for(end: int) -> None:
        """The job waits for a write in flight that ends at ``end`` (checkpoint time)."""
        nonlocal t
        wait = max(end - t, 0)
        us["ckpt"] += wait
        us["wait"] += wait
        t += wait

    def drain() -> None:
        """The job waits for the write in flight to end, which makes it durable."""
        if wend:
            wait_for(wend)
            durable()

    def abort() -> None:
        """A rollback aborts the writes in flight (the persistent one's, a memory tier's): neither becomes a rollback
        target."""
        nonlocal wend
        if wend:
            c["aborted"] += 1
            wend = 0
        for x in tiers:
            if x.wend:
                x.n["saves_aborted"] += 1
                x.wend = 0

    def tier_durable(x: _Tier) -> None:
        """Memory tier ``x``'s save in flight is written: the tier's copy, a rollback target unless a checkpoint is
        newer (a persistent save, or a higher tier's, stands for the tier's at its own steps); one whose snapshot
        held the present SDC (committed SDCs) commits it with the copy, baked in if no checkpoint held it yet."""
        nonlocal last, clean
        x.wend = 0
        if x.wfail:  # its write failed: no rollback target
            x.n["saves_failed"] += 1
            return
        x.n["saves"] += 1
        if x.wsdc:
            c["sdc_baked"] += not held()
            x.keep(x.wstep, True)
            last = max(last, x.wstep)
            return
        x.keep(x.wstep, False)
        if x.wstep > last:
            last = clean = x.wstep
        elif committed:  # a newer checkpoint may hold the SDC: this copy the newest clean one
            clean = max(clean, x.wstep)

    def roll_back(to: int) -> None:
        """A restart's rollback: every group runs again (elastic replica groups; with servers once their replacements
        are ready: ``staffed``), the uncommitted work lost; a memory tier's copies above ``to`` are gone (found
        corrupt, holding the SDC found, or above a persistent fallback)."""
        nonlocal cur, pend, staffed, filled
        c["recompute"] += cur - to
        cur, pend = to, 0
        filled = filled and to != 0
        if servers is not None:
            for _, x, ready in rejoins:
                servers.back(x)
                staffed = max(staffed, ready)
        rejoins.clear()
        for x in tiers:
            x.ring[:] = [y for y in x.ring if y[0] <= to]

    def wait_staffed() -> None:
        """A restart that brought dropped groups back waits for their last replacement (waiting bucket)."""
        nonlocal t, staffed
        if staffed > t:
            us["waiting"] += staffed - t
            t = staffed
        staffed = 0

    def tier_corrupt(x: _Tier) -> bool:
        """A load of memory tier ``x``'s checkpoint finds it corrupt (counted)."""
        bad = x.corrupt > 0 and rng.random() < x.corrupt
        x.n["loads_corrupt"] += bad
        return bad

    def recover() -> int:
        """A rollback to the persistent checkpoint (the memory tier lost, or older): the newest that loads, and the
        loads' time."""
        nonlocal last, clean, plast, n_corrupt, pclean
        if p_corrupt:
            last, loads, gone = fallback()
            if kept and kept[-1][1]:  # (committed SDCs) a checkpoint holding the SDC: it stays
                n_corrupt -= gone
            else:
                clean, n_corrupt = last, 0
            pclean = min(pclean, last)
            load_us = loads * plan.load_us
        else:
            if M and committed:  # the newest persistent checkpoint, which may hold the SDC
                last, clean = plast, min(clean, plast)
            elif M:
                last = clean = plast
            load_us = plan.load_us if last > 0 else 0  # a checkpoint's load; none at the job's start
        if M:
            plast = last
            c["rec_persistent" if last > 0 else "rec_start"] += 1
        return load_us

    def stopped(detect_us: int, restart_us: int, lost: tuple[bool, ...] = (False, False)) -> None:
        """A hard failure or a shadow disagreement: roll back to the newest checkpoint (an SDC a checkpoint holds
        survives it; one in the rolled-back steps only goes with them), detect, restart (and load it). With memory
        tiers, the newest copy of those not ``lost`` (one flag per tier)."""
        nonlocal corrupted, deadline, t, last, clean
        abort()
        for x, gone in zip(tiers, lost, strict=False):
            if gone:  # the tier's copies gone, clean ones or ones holding the SDC
                x.ring.clear()
        # the memory tiers' copies newer than the persistent checkpoint, newest first (a corrupt one paid, dropped)
        back, load_us, x = tier_chain(plast) if M else (0, 0, None)
        if back:
            last, clean = back, min(clean, back)
            x.n["recoveries"] += 1
        else:
            load_us += recover()
        restart_us += load_us
        us["load"] += load_us
        roll_back(last)
        if corrupted and not held():
            corrupted, deadline = False, NEVER
        us["detect"] += detect_us
        us["restart"] += restart_us
        t += detect_us + restart_us

    def restart(i: int) -> tuple[int, bool | None]:
        """A hard failure's restart (docs/model.md, "In-process restarts" and "Crash loops"): for a cause that
        allows one, an in-process restart first (one draw: it succeeds with its probability); unless it succeeded,
        the cause's restart, which under a crash loop fails with its probability (one draw per attempt) and is tried
        again, at most ``restart_limit`` attempts, then escalated. (Its time, the in-process outcome: None when not
        tried.)"""
        cause, spent, outcome = causes[i], 0, None
        if cause.in_process:
            spent, outcome = plan.inproc_us, rng.random() < plan.inproc_ok
            c["inproc_ok" if outcome else "inproc_failed"] += 1
            if outcome:
                return spent, outcome
        attempts = 1
        if cause.crash_loop and plan.restart_fail > 0:
            attempts = 0
            while attempts < plan.restart_limit:
                attempts += 1
                if rng.random() >= plan.restart_fail:  # this attempt succeeded
                    break
            else:  # every attempt failed: a manual intervention, which ends with the job running
                c["escalations"] += 1
                spent += plan.escalation_us
        attempts_by_cause[cause.name] += attempts
        return spent + attempts * plan.cause_restart_us[i], outcome

    def cause_of() -> int:
        """A hard failure's cause (one draw, only with several causes)."""
        return min(bisect_left(cumulative, rng.random()), len(causes) - 1) if len(causes) > 1 else 0

    def migrate_before(gn: int) -> tuple[list[int], int | None]:
        """Live migration (docs/model.md, "Predicted failures migrated live"): the servers failing in the coming step
        ``gn`` and the interruption's cause; one flagged ahead (one draw: its cause's share), not a burst's, whose
        failing servers each find a warm standby (in the pool, or back from repair by now) moves to them before the
        step, pausing the job (restart bucket), with no rollback; the standbys then face the step themselves, and a
        failure of theirs is decided the same way. (What fails in the step, and its cause: None if none drawn.)"""
        nonlocal t
        failed = servers.step(gn)
        while failed:
            i = cause_of()
            if servers.burst_hit or not causes[i].predicted or rng.random() >= causes[i].predicted:
                return failed, i
            if servers.standbys_by(t) < len(failed):
                c["no_standby"] += 1
                return failed, i
            c["migrations"] += 1
            c["server_failures"] += len(failed)
            t0 = t
            t += plan.migrate_us
            us["restart"] += plan.migrate_us
            failed = servers.migrate(failed, t0, t, gn)
        return failed, None

    def open_window(at: int) -> None:
        """An SDC detection opens a hyper window anchored at the rollback point ``at``."""
        nonlocal hyper_end, anchor
        if hi:
            c["activations"] += g >= hyper_end
            hyper_end, anchor = g + window, at

    def detected(to: int, tier: _Tier | None = None, paid: int = 0, chained: bool = False) -> None:
        """An SDC detection: roll back to ``to`` (the SDC gone), restart, open a hyper window. With a memory tier
        and committed SDCs ``to`` is a copy of ``tier`` (else a persistent checkpoint or the start), and ``paid`` the
        loads of the tiers' copies, those found corrupt before it included; with ``chained`` (a late find's chain of
        corrupt loads) ``paid`` is its loads' time; the checkpoints holding the SDC are discarded."""
        nonlocal last, clean, corrupted, deadline, n_corrupt, t, plast, pclean
        abort()
        if M and committed:  # (corrupt tier copies and persistent ones: paid)
            if tier is not None:
                load_us = paid
                tier.n["recoveries"] += 1
            else:  # (``chained``: the persistent loads among ``paid``)
                load_us = paid + (plan.load_us if to > 0 and not chained else 0)
                c["rec_persistent" if to > 0 else "rec_start"] += 1
                plast = pclean = to
            plast = pclean
        elif M:  # (no committed SDCs: ``to`` is the newest checkpoint) the tier's copies newer than the persistent one
            back, load_us, x = tier_chain(plast)
            if back:
                to = back
                x.n["recoveries"] += 1
            else:  # the persistent checkpoint, where its fallback starts (the corrupt tier copies' loads paid)
                load_us += recover()
                to = last
        elif chained:
            load_us = paid
        elif p_corrupt:
            load_us = recover()
            to = last
        else:
            load_us = plan.load_us if to > 0 else 0  # a checkpoint's load; none at the start
        roll_back(to)
        kept[:] = [(y, False) for y, _ in kept if y <= to]  # (below ``to``: clean, or holding an SDC now accepted)
        for x in tiers:  # (below ``to``: clean, or holding an SDC now accepted)
            x.ring[:] = [(y, False) for y, _ in x.ring]
        last = clean = to
        corrupted, deadline, n_corrupt = False, NEVER, 0
        corrupt.clear()
        restart_us = plan.sdc_restart_us + load_us
        us["restart"] += restart_us
        us["load"] += load_us
        t += restart_us
        wait_staffed()
        open_window(to)

    def found() -> None:
        """An SDC in no checkpoint yet, found (a detector, validation): back to the newest checkpoint. With a memory
        tier beside committed SDCs the tier's copies newer than the persistent one are loaded first, newest first;
        found corrupt, the persistent one."""
        if M and committed:
            back, paid, x = tier_chain(plast)
            if not back and p_corrupt:  # the newest persistent checkpoint that loads
                to, loads, _ = fallback()
                detected(to, paid=paid + loads * plan.load_us, chained=True)
            else:
                detected(back or plast, x, paid)
        else:
            detected(last)

    uniform, one, hard_q, sdc_q = rng.random, len(types) == 1, hard.q[0], sdc.q[0]
    step_us = plan.step_us if plan.step_times is None else None  # None: each step's own duration (stragglers)
    stepped_us, shadow_us = 0, plan.shadow_us  # compute time of the executed steps
    while cur < target:
        if migrating:  # the coming step's failures flagged ahead migrate before it
            coming, coming_cause = migrate_before(g + 1)
        if wend and wend <= t:  # the write ended before this step starts: the save is durable
            durable()
        for x in tiers:  # ... a memory tier's too
            if x.wend and x.wend <= t:
                tier_durable(x)
        share = d = step_us or durations.of(g + 1)
        if E:  # the groups healed by the step's start run it; of its base compute the groups out's share is
            # degraded, and the fault-tolerant mode's overhead (under stragglers the time above the base step time
            # is the straggler bucket's whole: the job's step-time distribution, as its hazard, is the whole job's)
            for r, x, _ in rejoins:
                if r <= t:
                    c["rejoins"] += 1
                    if servers is not None:  # its servers back, each a new lifetime
                        servers.back(x)
            rejoins[:] = [r for r in rejoins if r[0] > t]
            share = plan.step_us * (E - len(rejoins)) // E
            us["degraded"] += plan.step_us - share + plan.elastic_overhead_us
            t += plan.elastic_overhead_us
        pend += share
        cur += 1
        g += 1
        stepped_us += d
        slowed = d * slow_ppm // 10**6 if wend else 0  # a step that starts while a save writes runs slower
        us["ckpt"] += slowed
        us["write"] += slowed
        t += d + slowed + shadow_us
        in_hyper = hi and g <= hyper_end
        if in_hyper:
            c["hyper_steps"] += 1
        # (a) hard failure
        drawn = None  # the failure's cause, when a migration's decision drew it already
        if servers is not None:
            failed_servers, drawn = (coming, coming_cause) if migrating else (servers.step(g), None)
            c["server_failures"] += len(failed_servers)
            failed = 0 if failed_servers else -1
        else:
            failed = (0 if uniform() < hard_q else -1) if one else hard.draw()  # inline: a call costs a third
        if failed >= 0:
            i = drawn if drawn is not None else cause_of()
            # (with servers every group its failed servers are in)
            hit = len({servers.group[x] for x in failed_servers}) if E and servers is not None else 1
            if E and causes[i].elastic and E - len(rejoins) - hit >= plan.elastic_min:  # its group dropped: the
                # step's work lost (run again on the groups left), the failure noticed, the group back once healed
                c["drops"] += 1
                c["recompute"] += 1
                cur -= 1
                pend -= share
                t1 = t
                t += plan.cause_detect_us[i]
                us["detect"] += plan.cause_detect_us[i]
                if servers is None:
                    rejoins.append((t + plan.rejoin_us, -1, 0))
                else:  # its servers replaced (with pools), each group back once its replacements are ready
                    for x, ready in servers.drop(failed_servers, t1, t, g, causes[i].server_down).items():
                        rejoins.append((ready + plan.rejoin_us, x, ready))
                continue
            by_cause[causes[i].name] += 1
            hard_by_type[failed] += 1
            c["interruptions"] += 1
            restart_us, in_process = restart(i)
            down = causes[i].server_down and not in_process  # (an in-process restart that succeeded cleared it)
            if servers is not None and not servers.cap and down:  # repaired at once: does each repair hold?
                servers.relapse_at_once(failed_servers)
            wait = 0
            if servers is not None and servers.cap:  # replaced after detection: the restart waits for them
                tau = t + plan.cause_detect_us[i] + (plan.inproc_us if in_process is False else 0)
                # (a cause that takes no server down: the servers back from repair return, none leaves the job)
                wait = servers.replace(failed_servers if down else [], t, tau, g) - tau
            # each memory tier: lost when every holder of some shard failed
            lost = tuple(down and (servers.lost(failed_servers, x.copies, x.jump) if servers is not None
                                   else x.copies == 1) for x in tiers)  # without servers: a local copy goes, a
            for x, gone in zip(tiers, lost, strict=True):  # peer group keeps others
                x.n["losses"] += gone
            # the survivors save the step before the failed one just in time (if they can: a draw when jit_share <
            # 1), unless the newest checkpoint that survived is that step: a persistent checkpoint
            newest = last if not M else max([plast] + [x.newest() for x, gone in zip(tiers, lost, strict=True)
                                                       if not gone])
            if causes[i].jit and (plan.jit_share >= 1 or rng.random() < plan.jit_share) and cur - 1 > newest:
                c["jit"] += 1
                us["ckpt"] += plan.jit_us
                t += plan.jit_us
                if corrupted and not committed:  # the SDC in no checkpoint yet: baked in, the rollback goes past it
                    c["sdc_baked"] += 1
                elif corrupted:  # committed SDCs: the save holds the SDC, the rollback's target all the same
                    c["sdc_baked"] += not held()
                    n_corrupt += 1
                    corrupt.append(cur - 1)
                    del corrupt[:-retention]
                    keep(cur - 1, True)
                    last = plast = cur - 1
                else:
                    last = clean = plast = pclean = cur - 1
                    keep(cur - 1)
            stopped(plan.cause_detect_us[i], restart_us, lost)
            us["waiting"] += wait
            t += wait
            wait_staffed()
            continue
        # (a') shadow disagreement, found at the end of its step
        if k and rng.random() < disagree:
            c["sdc_detected"] += 1
            c["shadow_detected"] += 1
            c["sdc_onsets"] += 1
            onsets_by_type[0] += 1
            stopped(0, plan.sdc_restart_us)
            open_window(last)
            continue
        # (b) SDC onset, its detectors drawn
        if not corrupted:
            onset = (0 if uniform() < sdc_q else -1) if one else sdc.draw()
            if onset >= 0:
                corrupted = True
                c["sdc_onsets"] += 1
                onsets_by_type[onset] += 1
                deadline, det = NEVER, 0
                for j, dt in enumerate(detectors):
                    covered = rng.random() < dt.coverage
                    latency = round(_latency(rng, dt) * US_PER_SECOND)
                    if covered and t + latency < deadline:
                        deadline, det = t + latency, j
        # (b') a detector's finding due by the end of this step
        if corrupted and deadline <= t:
            found_by[detectors[det].name] += 1
            if not held():
                c["sdc_detected"] += 1
                found()
            else:
                c["late"] += 1
                # the memory tier's clean copies newer than the clean persistent one: loaded first, newest first
                back, paid, x = tier_chain(pclean, clean_only=True) if M else (0, 0, None)
                if back:
                    c["lost"] += n_corrupt
                    detected(back, x, paid)
                elif p_corrupt:  # down the kept checkpoints, each load found corrupt or not
                    to, loads = late_fallback()
                    detected(to, paid=paid + loads * plan.load_us, chained=True)
                elif n_corrupt < retention:  # (the corrupt tier copies' loads paid)
                    c["lost"] += n_corrupt
                    detected(pclean if M else clean, paid=paid)
                else:  # unrecoverable: the oldest retained checkpoint, the SDC accepted
                    c["unrecoverable"] += 1
                    c["lost"] += retention - 1
                    detected(corrupt[-retention], paid=paid)
            continue
        # (c) validation point, before the checkpoint
        if vi and cur % vi == 0:
            us["val"] += plan.val_us
            t += plan.val_us
            if corrupted and not held():
                c["sdc_detected"] += 1
                found()
                continue
        # (d) checkpoint point
        if (cur - anchor) % hi == 0 if in_hyper else cur % ci == 0:
            drain()  # one write in flight: a save due while one writes waits for it
            us["ckpt"] += plan.ckpt_us
            t += plan.ckpt_us
            if corrupted and not committed:  # baked in: roll back
                c["sdc_baked"] += 1
                detected(last)
            elif (fails := p_fail > 0 and rng.random() < p_fail) and not write_us:  # failed: the job goes on
                c["failed"] += 1
            elif write_us:  # asynchronous: the snapshot taken, the write starts
                wend, wstep, wsdc, wfail = t + write_us, cur, corrupted, fails
            elif corrupted:  # committed with the checkpoint
                c["sdc_baked"] += not held()
                n_corrupt += 1
                corrupt.append(cur)
                del corrupt[:-retention]
                keep(cur, True)
                last = plast = cur
                c["checkpoints"] += 1
            else:
                last = clean = plast = pclean = cur
                c["checkpoints"] += 1
                keep(cur)
                us["productive"] += pend
                pend = 0
        elif tiers and (x := next((y for y in tiers if cur % y.every == 0), None)) is not None:  # a memory tier's
            # save (a checkpoint, or a higher tier's save, stands for it at its own steps)
            if x.wend:  # one write in flight: the save waits for the one before, which makes it durable
                wait_for(x.wend)
                tier_durable(x)
            us["ckpt"] += x.us
            t += x.us
            if x.save_fail > 0 and rng.random() < x.save_fail:  # failed: the tier's copy stays
                if x.write_us:  # (its write runs, and fails at its end)
                    x.wend, x.wstep, x.wfail, x.wsdc = t + x.write_us, cur, True, False
                else:
                    x.n["saves_failed"] += 1
            elif corrupted and not committed:  # baked in: roll back (reference semantics)
                c["sdc_baked"] += 1
                detected(last)
            elif corrupted and not x.write_us:  # committed with the tier's save (with one copy, it overwrites the
                # tier's clean copy)
                c["sdc_baked"] += not held()
                x.keep(cur, True)
                last = cur
                x.n["saves"] += 1
            elif x.write_us:  # its write starts: a rollback target once written (committed SDCs: holding the SDC
                # present, committed with it then)
                x.wend, x.wstep, x.wfail, x.wsdc = t + x.write_us, cur, False, corrupted
            else:
                x.keep(cur, False)
                last = clean = cur
                x.n["saves"] += 1
    drain()  # the job's end waits for the write in flight, as trainers do at shutdown
    for x in tiers:  # a memory tier's write in flight is dropped: the job needs no copy in memory after it ends
        x.n["saves_aborted"] += x.wend > 0
    # end of job: an SDC still present is baked in (if no checkpoint took it yet), void since the clean checkpoint
    if corrupted:
        c["sdc_baked"] += not held()
        c["recompute"] += cur - clean
        c["final_void"] = cur - clean
    else:
        us["productive"] += pend

    step_s, wall = spec.step_seconds, t / US_PER_SECOND
    names = [a.name for a in types]
    return {
        "steps_executed": g,
        "mean_step_seconds": (stepped_us + g * (shadow_us + plan.elastic_overhead_us)) / US_PER_SECOND / g,
        "target_steps": target,
        "recompute_steps": c["recompute"],
        "interruptions": c["interruptions"],
        "interruptions_by_cause": by_cause,
        "interruptions_by_type": dict(zip(names, hard_by_type, strict=True)),
        "sdc_onsets": c["sdc_onsets"],
        "sdc_onsets_by_type": dict(zip(names, onsets_by_type, strict=True)),
        "sdc_detected": c["sdc_detected"],
        "sdc_baked": c["sdc_baked"],
        "shadow_detected": c["shadow_detected"],
        "hyper_activations": c["activations"],
        "hyper_steps": c["hyper_steps"],
        "sdc_late_found": c["late"],
        "sdc_unrecoverable": c["unrecoverable"],
        "checkpoints_lost": c["lost"],
        "checkpoints": c["checkpoints"],
        "saves_aborted": c["aborted"],
        "saves_failed": c["failed"],
        "loads_corrupt": c["loads_corrupt"],
        "fallbacks_to_start": c["fallbacks_to_start"],
        "jit_saves": c["jit"],
        "in_process": {"succeeded": c["inproc_ok"], "failed": c["inproc_failed"]},
        "restart_attempts_by_cause": attempts_by_cause,
        "escalations": c["escalations"],
        "migrations": c["migrations"],
        "migrations_no_standby": c["no_standby"],
        # the memory tiers' counts, summed over them (two tiers: each one's too, by its kind)
        "tier_loads_corrupt": sum(x.n["loads_corrupt"] for x in tiers),
        "tier_saves_failed": sum(x.n["saves_failed"] for x in tiers),
        "tier_saves_aborted": sum(x.n["saves_aborted"] for x in tiers),
        "tier_saves": sum(x.n["saves"] for x in tiers),
        "tier_losses": sum(x.n["losses"] for x in tiers),
        "recoveries_tier": sum(x.n["recoveries"] for x in tiers),
        **({"tiers": {x.kind: dict(x.n) for x in tiers}} if len(tiers) > 1 else {}),
        "recoveries_persistent": c["rec_persistent"],
        "recoveries_start": c["rec_start"],
        "checkpoint_write_seconds": us["write"] / US_PER_SECOND,
        "checkpoint_wait_seconds": us["wait"] / US_PER_SECOND,
        "sdc_found_by_detector": found_by,
        "server_failures": c["server_failures"],
        "wall_seconds": wall,
        "shadow_seconds": g * shadow_us / US_PER_SECOND,
        "checkpoint_seconds": us["ckpt"] / US_PER_SECOND,
        "validation_seconds": us["val"] / US_PER_SECOND,
        "restart_seconds": us["restart"] / US_PER_SECOND,
        "load_seconds": us["load"] / US_PER_SECOND,
        "detection_seconds": us["detect"] / US_PER_SECOND,
        "waiting_seconds": us["waiting"] / US_PER_SECOND,
        **({f"replacements_{k}": v for k, v in servers.replaced.items()} if servers is not None else {}),
        **({f"repairs_{k}": v for k, v in servers.repairs.items()} if servers is not None else {}),
        **({f"diagnosis_{k}": v for k, v in servers.diagnosis.items()} if servers is not None else {}),
        **({"retirements": servers.retirements} if servers is not None else {}),
        **({"bursts": servers.bursts, "burst_servers": servers.burst_servers} if servers is not None else {}),
        # the pools' GPU-hours: their servers the whole job, less each retired server's time from its retirement
        **({"gpu_hours_pools": ((plan.cluster - plan.servers) * t - sum(t - r for r in servers.retired_at))
            / US_PER_SECOND * spec.servers.gpus_per_server / 3600.0} if servers is not None and servers.cap else {}),
        # simd's definition (productive / wall: void work is not productive) and the seed's
        "effective_utilization": (target - c["final_void"]) * step_s / wall if not E else
        us["productive"] / US_PER_SECOND / wall,
        **({"degraded_seconds": us["degraded"] / US_PER_SECOND, "elastic_drops": c["drops"],
            "elastic_rejoins": c["rejoins"]} if E else {}),
        "seed_effective_utilization": target * step_s / wall,
    }


class _Tier:
    """A memory tier in the oracle (docs/model.md, "Memory tiers"): its parameters (the plan's ``mem_*`` or
    ``low_*``), its copies (its newest ``keep`` durable saves, oldest first: (job step, whether it holds the present
    SDC: committed SDCs)), its save in flight (when its write ends, 0: none; its job step; whether it fails; whether
    it holds the present SDC) and its
    counts."""

    def __init__(self, tier, every: int, us: int, load_us: int, corrupt: float, save_fail: float, write_us: int,
                 keep: int):
        self.kind, self.copies, self.jump = tier.kind, tier.copies, tier.jump_servers
        self.every, self.us, self.load_us, self.corrupt = every, us, load_us, corrupt
        self.save_fail, self.write_us, self.keep_n = save_fail, write_us, keep
        self.ring: list[tuple[int, bool]] = []
        self.wend = self.wstep = 0
        self.wfail = self.wsdc = False
        self.n = dict.fromkeys(("saves", "saves_failed", "saves_aborted", "losses", "recoveries", "loads_corrupt"), 0)

    def keep(self, step: int, holds: bool) -> None:
        """A durable save: the newest of its copies, the oldest beyond its retention gone."""
        self.ring.append((step, holds))
        del self.ring[:-self.keep_n]

    def newest(self, clean_only: bool = False) -> int:
        """Its newest copy's job step (with ``clean_only``, its newest without the present SDC; 0: none)."""
        if not clean_only:
            return self.ring[-1][0] if self.ring else 0
        return next((step for step, holds in reversed(self.ring) if not holds), 0)


class _FirstFailure:
    """Groups of GPUs (count, rate per GPU-hour) and their step hazards ``q``. ``draw`` draws one Bernoulli per
    group and returns the group that failed in the step (-1: none). When several fail, the remaining groups'
    Bernoullis are drawn, then each failed group's first failure time within the step (the first of ``n``
    exponential clocks of rate ``-log(1 - p)`` per step, given that it rings within the step:
    ``t = -log(1 - u q) / L`` with ``q`` the group's step hazard and ``L = -log(1 - q)``), and the earliest is
    charged (fleet.py). A group whose GPUs fail surely (q = 1) fails at time 0; ties go to the first such."""

    def __init__(self, rng: random.Random, groups: list[tuple[int, float]], step_seconds: float):
        self.uniform = rng.random
        self.q = [per_step_cluster_hazard(rate, n, step_seconds) for n, rate in groups]
        self.rate = [math.inf if q >= 1.0 else -math.log1p(-q) for q in self.q]

    def draw(self) -> int:
        failed = [i for i, q in enumerate(self.q) if self.uniform() < q]
        return -1 if not failed else failed[0] if len(failed) == 1 else min(failed, key=self._first_time)

    def _first_time(self, i: int) -> float:
        u = self.uniform()
        return 0.0 if math.isinf(self.rate[i]) else -math.log1p(-u * self.q[i]) / self.rate[i]


class _Servers:
    """The servers of a plan (servers.py), one Bernoulli each per executed step: server ``i`` at age ``a``
    (executed steps since its lifetime began) fails in the step with probability ``1 - Sv(a + 1) / Sv(a)``, Sv
    its lifetime's survival function (tabulated by age as ages are met). ``step`` returns how many failed; they
    start new lifetimes, the others age by one step. Lemons by servers.is_lemon; gamma rate multipliers drawn
    with ``random.Random.gammavariate`` when the simulation starts (the engine's own draws are Marsaglia-Tsang).
    A lemon a true repair fixes takes an ordinary server's scale. In operational time (regimes, a rate schedule)
    step ``g`` adds ``m(g)`` to every running server's age instead of 1 (``multiplier``) and the hazard is
    ``1 - Sv(a + m) / Sv(a)``. A repair that does not hold (servers.py, "Relapses"; one draw more per repair) gives the
    server's next lifetime, from when it next joins the job, the short exponential's hazard (``short``)."""

    def __init__(self, plan: Plan, rng: random.Random):
        self.uniform = rng.random
        self.kind, self.shape = srv.LIFETIMES[plan.lifetime_kind], plan.lifetime_shape
        n, a = plan.table, plan.rate_shape
        self.mult = [rng.gammavariate(a, 1.0 / a) for _ in range(n)] if a > 0 else [1.0] * n
        self.lemon = [srv.is_lemon(i, plan.lemon_fraction) for i in range(n)]
        self.tables: dict[float, list[float]] = {}  # hazard by age, per lifetime scale
        # each server's table of ``tables`` (None: not looked up yet, or its scale changed: a lemon fixed), and under
        # operational time its survival at its age (age, scale, Sv): the step's Sv(a + m) is the next step's Sv(a)
        self.table: list[list[float] | None] = [None] * plan.table
        self.surv: list[tuple[float, float, float] | None] = [None] * plan.table
        self.age = [0] * plan.table
        # operational time (servers.py): the regime of the step (None: none drawn yet), P(leaving each regime in a
        # step), the schedule's pieces; with either, ages count operational steps (floats)
        self.regime: int | None = None
        self.leave = (-math.expm1(plan.regime_calm_log1m), -math.expm1(plan.regime_stormy_log1m))
        self.sched = [(plan.rate_schedule[k], plan.rate_schedule[k + 1]) for k in range(0, len(plan.rate_schedule), 2)]
        self.timed = plan.regimes or bool(self.sched)
        # capacity: the cluster's roles (the job's servers, the standbys, the spares) and repairs
        self.cap, self.plan, self.rng = plan.cluster > 0, plan, rng
        job, w = plan.servers, plan.standbys
        self.role = srv.start_roles(job, w, plan.table).tolist()
        self.repair_end = [NEVER] * plan.table
        self.replaced = dict.fromkeys(("standby", "spare", "waited"), 0)
        self.repairs = dict.fromkeys(("started", "manual", "false", "false_manual", "lemons_fixed"), 0)
        # relapses: each server's next lifetime short (its repair did not hold), its current lifetime short
        self.pending, self.short = [False] * plan.table, [False] * plan.table
        if plan.relapse_p:
            self.repairs["relapsed"] = 0
        self.diagnosis = dict.fromkeys(("missed", "wrong"), 0)
        self.retirements = 0
        self.bursts = self.burst_servers = 0
        self.replay_by_residue: dict[int, list[int]] | None = None  # replay: step residue -> its servers
        self.retired_at: list[int] = []  # when each retirement happened (us)
        self.blames: list[list[int]] = [[] for _ in range(plan.table)]  # each server's blame times (us)
        # elastic replica groups (docs/model.md): each job server's group (blocks of gs; -1 not the job's), a
        # replacement taking the group of the server it replaces; the groups out (their servers neither age nor fail)
        e = plan.elastic_groups
        self.gs = plan.servers // e if e else 1
        self.group = [i // self.gs if e and i < plan.servers else -1 for i in range(plan.table)]
        self.out: set[int] = set()

    def _logged_repair_us(self, i: int, g: int) -> float:
        """The log's repair time (us) of server i's replayed fault in executed step g, straight from the rules: its
        log server's faults in that step of the period (its copy's phase taken out), the longest of their repairs;
        -1 (the repair model's) without the log's repairs, without such a fault or with one left open."""
        p, s = self.plan, self.plan.spec.servers
        if not p.replay_repair_us:
            return -1.0
        n, period = p.replay_servers, p.replay_period
        r = (g - (i // n) * period // p.replay_copies - 1) % period + 1
        here = [rep for t, rep in zip(s.replay[i % n], s.replay_repairs[i % n], strict=True)
                if max(1, math.ceil(t / p.spec.step_seconds)) == r]
        if not here or any(math.isnan(x) for x in here):
            return -1.0
        return max(here) * 1e6

    def _replayed(self, g: int) -> list[int]:
        """The cluster servers whose replayed log has a fault in executed step g, in index order: server i's log
        server's fault steps f in [1, period] recur at f + m * period + phase_i (servers.py's rule), so
        by the residue of g modulo the period (tabulated once)."""
        p = self.plan
        if self.replay_by_residue is None:
            n, period = p.replay_servers, p.replay_period
            self.replay_by_residue = {}
            for i in range(len(self.role)):
                log, phase = i % n, (i // n) * period // p.replay_copies
                for f in p.replay[n + 1 + p.replay[log]:n + 1 + p.replay[log + 1]]:
                    self.replay_by_residue.setdefault((f + phase) % period, []).append(i)
        return self.replay_by_residue.get(g % p.replay_period, [])

    def hazard(self, i: int, a: int) -> float:
        """Server ``i``'s probability of failing in a step at age ``a``."""
        if self.short[i]:  # (memoryless)
            return -math.expm1(-self.mult[i] / self.plan.relapse_scale)
        t = self.table[i]
        if t is None:
            scale = (self.plan.scale_lemon if self.lemon[i] else self.plan.scale_normal) / self.mult[i]
            t = self.table[i] = self.tables.setdefault(scale, [])
        if a < len(t):
            return t[a]
        scale = (self.plan.scale_lemon if self.lemon[i] else self.plan.scale_normal) / self.mult[i]
        # tabulated ahead of the age (a table per server under gamma multipliers: each would miss at every step)
        sv = [srv.survival(self.kind, self.shape, scale, x) for x in range(len(t), a + _AHEAD + 2)]
        t.extend(1.0 if s0 == 0.0 else 1.0 - s1 / s0 for s0, s1 in zip(sv[:-1], sv[1:], strict=True))
        return t[a]

    def multiplier(self, g: int) -> float:
        """Executed step ``g``'s rate multiplier (servers.py, "Operational time"): the regime's, drawn step by step (the
        first stationary, then leaving the regime with its per-step probability), times the schedule's piece that
        covers the step (the last whose first step is below g)."""
        p, m = self.plan, 1.0
        if p.regimes:
            if self.regime is None:
                self.regime = 1 if self.uniform() < p.regime_p_stormy else 0
            elif self.uniform() < self.leave[self.regime]:
                self.regime = 1 - self.regime
            m = p.regime_stormy if self.regime else p.regime_calm
        if self.sched:
            m *= [x for s, x in self.sched if s < g][-1]
        return m

    def timed_hazard(self, i: int, a: float, m: float) -> float:
        """Server ``i``'s probability of failing in a step that adds ``m`` to its operational age ``a``."""
        if self.short[i]:
            return -math.expm1(-m * self.mult[i] / self.plan.relapse_scale)
        scale = (self.plan.scale_lemon if self.lemon[i] else self.plan.scale_normal) / self.mult[i]
        held = self.surv[i]
        s0 = held[2] if held is not None and held[0] == a and held[1] == scale else \
            srv.survival(self.kind, self.shape, scale, a)
        s1 = srv.survival(self.kind, self.shape, scale, a + m)
        self.surv[i] = (a + m, scale, s1)
        return 1.0 if s0 == 0.0 else 1.0 - s1 / s0

    def step(self, g: int) -> list[int]:
        """The servers of the job that fail in this step (index order): their own Bernoullis, and with bursts
        a burst's with probability 1 - exp(burst_log1m): 2 + a geometric number of the running
        servers not failing already (uniformly), or every running server of the domain of one drawn uniformly."""
        p = self.plan
        self.burst_hit, self.m_step = False, 1.0  # (for a migration before the step: a burst, the multiplier)
        if p.replay_servers and not p.burst_log1m:  # (no ages to keep: a replay has no hazards)
            if p.mem_every:  # (a memory tier's groups are by position among them)
                self.running = [i for i, r in enumerate(self.role) if r == srv.JOB]
            return [i for i in self._replayed(g) if self.role[i] == srv.JOB and self.group[i] not in self.out]
        job, out = srv.JOB, self.out
        running = [i for i, r in enumerate(self.role) if r == job and self.group[i] not in out] if out else \
            [i for i, r in enumerate(self.role) if r == job]
        self.running = running
        # each running server's Bernoulli at its age, then its age one step (or m operational steps) older
        uniform, age, failed, aged = self.uniform, self.age, [], True
        if p.replay_servers:  # a replayed log (servers.py): the running servers whose log has a fault in step g
            failed = [i for i in self._replayed(g) if self.role[i] == srv.JOB and self.group[i] not in self.out]
            aged = False
        elif self.timed:
            m = self.m_step = self.multiplier(g)
            for i in running:
                a = age[i]
                age[i] = a + m
                if uniform() < self.timed_hazard(i, a, m):
                    failed.append(i)
        else:  # (hazard's table read here when it holds the age: a call per server and step costs a third more)
            table, short = self.table, self.short
            for i in running:
                t, a = table[i], age[i]
                age[i] = a + 1
                if uniform() < (t[a] if t is not None and a < len(t) and not short[i] else self.hazard(i, a)):
                    failed.append(i)
        if p.burst_log1m and self.uniform() < -math.expm1(p.burst_log1m):
            self.bursts += 1
            self.burst_hit = True
            if p.burst_domain:
                d = self.rng.choice(running) // p.burst_domain
                struck = [i for i in running if i // p.burst_domain == d and i not in failed]
            else:
                k = 2
                while self.uniform() >= p.burst_q:
                    k += 1
                rest = [i for i in running if i not in failed]
                struck = self.rng.sample(rest, min(k, len(rest)))
            self.burst_servers += len(struck)
            failed = sorted(failed + struck)
        if not aged:
            for i in running:
                self.age[i] += m if self.timed else 1
        for i in failed:
            self.age[i] = 0
            self.short[i] = False
        return failed

    def relapse_at_once(self, failed: list[int]) -> None:
        """Without pools each failed server that went down is repaired at once: whether its repair holds (a draw
        each, in index order), else its new lifetime short."""
        for i in failed:
            if self.plan.relapse_p and self.rng.random() < self.plan.relapse_p:
                self.short[i] = True
                self.repairs["relapsed"] += 1

    def _join(self, j: int) -> None:
        """Server ``j`` joins the job: a new lifetime, short when its repair did not hold."""
        self.age[j] = 0
        self.short[j], self.pending[j] = self.pending[j], False

    def standbys_by(self, t: int) -> int:
        """The warm standbys a migration at ``t`` finds: the pool's, and the servers back from repair by then (which
        join the standbys first), at most the plan's count."""
        back = sum(1 for i, r in enumerate(self.role) if r in srv.IN_REPAIR and self.repair_end[i] <= t)
        return min(self.plan.standbys, self.role.count(srv.STANDBY) + back)

    def migrate(self, failed: list[int], t0: int, t1: int, g: int) -> list[int]:
        """A live migration from ``t0`` to ``t1`` before step ``g``: the servers back from repair by ``t0`` return to
        the pools, each failing server (in index order) goes to repair from ``t1`` (no diagnosis: the prediction
        names it) and the lowest-numbered standby takes its place, new. Returns the standbys that fail in step ``g``
        themselves (their own Bernoullis, at the step's multiplier)."""
        role, end, plan = self.role, self.repair_end, self.plan
        back = [i for i, r in enumerate(role) if r in srv.IN_REPAIR and end[i] <= t0]
        for i in sorted(back, key=lambda i: (end[i], i)):
            role[i] = srv.STANDBY if role.count(srv.STANDBY) < plan.standbys else srv.SPARE
            end[i] = NEVER
        new = []
        for i in failed:
            self._repair(i, t1)
            j = role.index(srv.STANDBY)
            self.replaced["standby"] += 1
            role[j] = srv.JOB
            self._join(j)
            new.append(j)
        m = self.m_step
        if plan.replay_servers:
            hit = set(self._replayed(g))
            out = [j for j in new if j in hit]
        elif self.timed:
            out = [j for j in new if self.uniform() < self.timed_hazard(j, self.age[j], m)]
        else:
            out = [j for j in new if self.uniform() < self.hazard(j, self.age[j])]
        for j in new:
            self.age[j] = 0 if j in out else (m if self.timed else 1)
        self.burst_hit = False
        return sorted(out)

    def _repair(self, b: int, t1: int, logged: float = -1.0) -> None:
        """Server ``b`` to repair from ``t1``: its automatic stage (a mixture's component, then its time), perhaps
        the manual one, whether it fixes nothing (servers.py); ``logged`` >= 0: the log's own repair time (us) for
        the whole repair, the draws made all the same (servers.replay.repairs: log)."""
        plan = self.plan
        if plan.repair_mix_cum:  # a mixture: its component by its weight, then that component's time
            j = bisect_left(plan.repair_mix_cum, self.rng.random())
            duration = _draw(self.rng, DISTRIBUTIONS[plan.repair_mix_kind[j]], plan.repair_mix_scale_us[j],
                             plan.repair_mix_sigma[j])
        else:  # the automatic stage, then perhaps the manual one
            duration = _draw(self.rng, DISTRIBUTIONS[plan.repair_kind], plan.repair_scale_us, plan.repair_sigma)
        manual = self.rng.random() < plan.manual_probability
        if logged >= 0.0:
            duration, manual = logged, False
        if manual:
            duration += _draw(self.rng, DISTRIBUTIONS[plan.manual_kind], plan.manual_scale_us, plan.manual_sigma)
            self.repairs["manual"] += 1
        self.role[b] = srv.REPAIR_MANUAL if manual else srv.REPAIR
        self.repairs["started"] += 1
        if self.rng.random() < (plan.repair_fail_manual if manual else plan.repair_fail_auto):
            self.repairs["false"] += 1
            self.repairs["false_manual"] += manual
        elif self.lemon[b]:
            self.lemon[b] = False
            self.table[b] = None  # (an ordinary server's scale from now on)
            self.repairs["lemons_fixed"] += 1
        if plan.relapse_p and self.rng.random() < plan.relapse_p:  # the repair does not hold
            self.pending[b] = True
            self.repairs["relapsed"] += 1
        self.repair_end[b] = t1 + round(duration)

    def lost(self, failed: list[int], copies: int, jump: int) -> bool:
        """Whether a memory tier is lost with the servers ``failed`` in the step: each at its position among the
        job's servers when the step began, position x in the group of (x // (J m)) J m + x % J (J ``jump``, m
        ``copies``); lost when every member of some group failed."""
        position = {i: x for x, i in enumerate(self.running)}
        groups: dict[int, int] = {}
        for i in failed:
            x = position[i]
            b = x // (jump * copies) * jump * copies + x % jump
            groups[b] = groups.get(b, 0) + 1
        return any(n == copies for n in groups.values())

    def replace(self, failed: list[int], t1: int, tau: int, g: int = 0) -> int:
        """Capacity (``g``: the executed step the servers failed in, for a replayed fault's own repair time): the
        servers back from repair by ``tau`` return to the standbys (up to the plan's count), then
        the spares. Each failed server is diagnosed: missed (it stays in the job), pinned on another of the job's
        servers drawn at random (that one leaves, the failed one stays), or identified. The server blamed goes to
        repair from ``t1`` (or is retired: the plan's count of blames within its window, while the cluster keeps
        more servers than the job) and is replaced by the lowest-numbered standby, else the lowest-numbered spare
        (ready after its preemption), else the first server back from repair (the job waits for it). Returns when
        the last replacement is ready (>= tau), then the hosts' selection when a spare was taken or a repair waited
        for (the job re-scheduled beyond its standbys), which with the gang policy (``plan.gang``) also staffs the
        warm standbys again: the lowest-numbered spares (after their preemption), then the first servers back from
        repair."""
        ready, moved = tau, False
        for _, _, r, m in self._replaced(failed, t1, tau, g):
            ready, moved = max(ready, r), moved or m
        if moved and self.plan.gang:  # re-scheduled as a gang: the warm standbys staffed again too
            ready = max(ready, self._staff(tau))
        return ready + self.plan.host_selection_us if moved else ready

    def _replaced(self, failed: list[int], t1: int, tau: int, g: int, group: bool = False):
        """replace's servers (and, with ``group``, an elastic drop's: the scapegoat among the failing server's group),
        one by one: (the failing server, the replacement or None when none is needed, when it is ready, whether it
        was taken beyond the standbys)."""
        role, end, plan = self.role, self.repair_end, self.plan
        back = [i for i, r in enumerate(role) if r in srv.IN_REPAIR and end[i] <= tau]
        for i in sorted(back, key=lambda i: (end[i], i)):
            role[i] = srv.STANDBY if role.count(srv.STANDBY) < plan.standbys else srv.SPARE
            end[i] = NEVER
        for i in failed:
            if role[i] != srv.JOB:  # blamed for an earlier server's failure in this step: gone already
                continue
            b = i
            if plan.diagnosis_stream is not None:
                if self.rng.random() >= plan.diagnosis:
                    self.diagnosis["missed"] += 1
                    yield i, None, tau, False
                    continue
                if group and self.rng.random() < plan.misattribution and self.gs > 1:
                    b = self.rng.choice([j for j, r in enumerate(role) if r == srv.JOB and j != i and
                                         self.group[j] == self.group[i]])
                    self.diagnosis["wrong"] += 1
                elif not group and self.rng.random() < plan.misattribution and plan.servers > 1:
                    b = self.rng.choice([j for j, r in enumerate(role) if r == srv.JOB and j != i])
                    self.diagnosis["wrong"] += 1
            k, blames = plan.retire_after, self.blames[b]
            blames.append(t1)
            if k and len(blames) >= k and t1 - blames[-k] <= plan.retire_window_us and \
                    len(role) - role.count(srv.RETIRED) > plan.servers + plan.spares_withheld:
                role[b] = srv.RETIRED
                self.retirements += 1
                self.retired_at.append(t1)
            else:
                self._repair(b, t1, self._logged_repair_us(i, g) if b == i else -1.0)
            standby = [j for j, r in enumerate(role) if r == srv.STANDBY]
            spare = [j for j, r in enumerate(role) if r == srv.SPARE]
            ready, moved = tau, False
            if standby:
                j = standby[0]
                self.replaced["standby"] += 1
            elif len(spare) > plan.spares_withheld:  # a spare the job may take
                j = spare[0]
                self.replaced["spare"] += 1
                ready, moved = tau + plan.preempt_us, True
            else:
                j = min((j for j, r in enumerate(role) if r in srv.IN_REPAIR), key=lambda j: (end[j], j))
                self.replaced["waited"] += 1
                ready, moved = max(tau, end[j]), True
                end[j] = NEVER
            role[j] = srv.JOB
            self._join(j)
            x, self.group[b] = self.group[b], -1
            self.group[j] = x  # (j may be b itself, back from its own repair)
            yield i, j, ready, moved

    def _staff(self, tau: int) -> int:
        """A gang re-scheduling's warm standbys staffed again: the lowest-numbered spares (after their preemption),
        then the first servers back from repair. Returns when the last is ready (>= tau)."""
        role, end, plan, ready = self.role, self.repair_end, self.plan, tau
        while role.count(srv.STANDBY) < plan.standbys:
            spare = [j for j, r in enumerate(role) if r == srv.SPARE]
            if len(spare) > plan.spares_withheld:
                j = spare[0]
                ready = max(ready, tau + plan.preempt_us)
            else:
                repairing = [j for j, r in enumerate(role) if r in srv.IN_REPAIR]
                if not repairing:
                    break
                j = min(repairing, key=lambda j: (end[j], j))
                ready = max(ready, end[j])
                end[j] = NEVER
            role[j] = srv.STANDBY
        return ready

    def drop(self, failed: list[int], t1: int, tau: int, g: int, down: bool) -> dict[int, int]:
        """Elastic replica groups (docs/model.md): a failure's servers ``failed`` drop every group they are in, out
        until it rejoins; with pools each failed server (``down``: its cause takes it down) is diagnosed (a scapegoat
        drawn among its group), sent to repair and replaced as replace does, the replacement out with the group.
        Returns each group's time when its last replacement is ready, then its hosts' selection when one was taken
        beyond the standbys (with the gang policy once the warm standbys are staffed again too)."""
        of = {i: self.group[i] for i in failed}  # (before a replacement takes a blamed server's group)
        ready = {x: tau for x in of.values()}
        moved = dict.fromkeys(ready, False)
        if self.cap:
            for i, _, r, m in self._replaced(failed if down else [], t1, tau, g, group=True):
                x = of[i]
                ready[x], moved[x] = max(ready[x], r), moved[x] or m
            staffed = self._staff(tau) if any(moved.values()) and self.plan.gang else tau
            for x in ready:
                if moved[x]:
                    ready[x] = max(ready[x], staffed) + self.plan.host_selection_us
        self.out.update(ready)
        return ready

    def back(self, x: int) -> None:
        """Group ``x`` back in the job: each of its servers starts a new lifetime."""
        self.out.discard(x)
        for i, r in enumerate(self.role):
            if r == srv.JOB and self.group[i] == x:
                self.age[i] = 0


def _latency(rng: random.Random, dt) -> float:
    """A detector's latency in seconds, with ``random.Random``'s own samplers."""
    return _draw(rng, dt.distribution, dt.scale_seconds, dt.sigma)


def _draw(rng: random.Random, kind: str, scale: float, sigma: float) -> float:
    """A duration of a late detector's form (exponential mean, lognormal median and sigma, uniform on [0, scale]),
    with ``random.Random``'s own samplers."""
    if kind == "exponential":
        return rng.expovariate(1.0 / scale) if scale else 0.0
    if kind == "lognormal":
        return rng.lognormvariate(math.log(scale), sigma) if scale else 0.0
    return rng.uniform(0.0, scale)


class _StepDurations:
    """Under stragglers, the duration of executed step g in microseconds: what the engine's sampler gives step g
    (stragglers.py; the first ``slow_steps`` of the job with the slow ranks), drawn in blocks. (Without
    stragglers the loop takes the plan's step time itself.)"""

    def __init__(self, plan: Plan):
        self.plan, self.g0, self.block = plan, 0, []

    def of(self, g: int) -> int:
        p = self.plan
        i = g - 1 - self.g0
        if not 0 <= i < len(self.block):
            self.g0, i = g - 1, 0
            slow = max(0, min(_BLOCK, p.slow_steps - self.g0))
            self.block = p.step_times.durations(self.g0, _BLOCK, slow)[0].tolist()
        return self.block[i]
