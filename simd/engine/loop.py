"""The engine's compiled loop over replicas: every mechanism (causes, stragglers, shadow ranks, fleets,
hyper-checkpointing, committed SDCs and their detectors), each neutral when off, at 0.1-0.5 us per event.

``advance_all(until, max_jobs, pos, tot, start, aux, words, plan, tables, hq)`` advances every replica (a row of
the arrays laid out by layout.py) to ``until``, or until ``max_jobs`` jobs are complete in total (then its clock
stays at the end of the last one, as core.advance's ``max_jobs``; -1: no such stop). A replica moves segment
after segment: it finds the next interesting executed step (a hard failure or shadow disagreement, an SDC onset,
the validation or checkpoint point that meets an SDC in no checkpoint yet, a detector's finding, the end of a
hyper window, the job's end), crosses the quiet steps before it in closed form (kernel.quiet: their time;
how many fit in a budget), applies that step's *unit* (the step with its validation, checkpoint and
recovery), and stops at ``until`` before the first unit that would end after it, so any cut of time into calls
gives the same state. A job's end happens in the kernel: the replica's Totals then are copied to its ``start``
row (the next job's job_start) and the job's start time and step are its ``pos``'s. Under stragglers there is no
closed form: the kernel draws each executed step's duration once, in order (stepkernel.run and stepkernel.draw,
the slow ranks' table for the first slow_steps of a job), and decides the unit, a detector's finding and the
cut at ``until`` on the drawn times. The draws:

- hard failures and SDC candidates: the geometric gaps of streams.gaps, ``ceil(log(1 - r) / log(1 - p))``
  clipped to [1, 2**50], from the stream's draw number ``index`` (pcg.py's PCG64);
- the kind of hard-stream element ``index`` (a cause, or a shadow disagreement): draw ``index`` of the cause
  stream, ``searchsorted(stop_cumulative, 1 - r, "left")``; its accelerator type and the type of an SDC onset:
  draw ``index`` of "accel-hard" / "accel-sdc" the same way, only with several types (fleet.py);
- with servers (servers.py): no hard-stream gaps; each server's lifetime from the next draw of "lifetime"
  (kernel.servers: inverse transforms), the next failure the end of lifetime the tournament tree keeps first;
- with relapses (servers.py, "Relapses"): whether a repair holds, one draw of "repair" per repair (with pools the
  fifth of its draws; without pools one per failed server renewed at once), the short lifetime the next of
  "lifetime";
- a hard failure's restart (kernel/restarts.py), for a cause with an in-process restart or a crash loop: draw
  ``index`` of "in-process" (the in-process restart succeeds?), draws ``restart_limit * index`` .. of
  "restart-fail" (each attempt of the cause's restart fails?), as far as the attempts go;
- live migration, for an interruption with servers whose cause has a share flagged ahead: draw ``index`` of
  "predict" (flagged?); a migrated failure is a unit of its own (_MIGRATE) before its step;
- a committed SDC's detectors: draws ``2 * nd * index`` .. of "sdc-detect", two per detector (coverage, latency),
  the latency by late.latency_us's inverse transforms; the lognormal's standard normal quantile is
  statistics.NormalDist.inv_cdf's algorithm (Wichura 1988, AS241), transcribed with its coefficients and its
  order of operations, so it gives the same doubles (tests compare it with the standard library's).

Asynchronous saves (docs/model.md): with writes every checkpoint point is a unit (a save waits there for the
write before it, then starts its own), and while a save writes (State.write_end) the segment's steps run at the
slowed step time and end no later than the step in which the write ends (quiet.fit on the slowed stretch; under
stragglers stepkernel.run stops there); the write is durable at the next pass, before any unit that starts at or
after its end (``_durable``), and a rollback aborts it.

A memory tier's saves with writes (State.tier_write_end) are units as the persistent ones are (inside hyper windows
too), unless each write ends within M - 1 steps of the base step time (the least M - 1 steps last), no hyper
window can open and SDCs are not committed (a written save that holds one commits it: ``_tier_durable``): then,
while no write is in flight, its saves stay among the quiet steps, each one's write durable before the next save,
and the stretch leaves the newest one's write in flight when its end (that save's end, in closed form or
stepkernel.run's, plus the write) is not reached by the stretch's end; a rollback or the job's end in the unit after
them aborts it.

A memory tier keeping more than one copy (docs/model.md, "Memory tiers"): its copies are the replica's ``tier`` aux
region (State.tier_ckpts), each of its points a unit (its save joins them there), and a recovery loads those newer
than the newest persistent checkpoint (for a committed SDC's late find, the clean ones newer than the newest clean
persistent one) newest first, each a draw of "corrupt" (``_tier_chain``); a rollback drops those above its step.

Two memory tiers (docs/model.md, "Two memory tiers"): every point of the local tier is a unit (the peer tier's and
the persistent ones among them: the quiet steps hold no save of either tier), the peer tier's copies the ``tier`` aux
region whatever it keeps and the local tier's the ``low`` one (State.low_ckpts), each tier's write in flight its own
(State.tier_write_*, low_write_*); a recovery loads the local copies newer than the peer tier's newest and than the
persistent checkpoint, newest first, then the peer tier's newer than the persistent one (``_two_chain``), each at its
tier's load, and drops both tiers' copies above the step it goes back to; beside committed SDCs a late find the same
among the copies older than the onset (a copy of a step at or after ``onset_step`` holds the SDC).

Elastic replica groups (docs/model.md): the groups out and their rejoin times are the replica's ``rejoin`` aux
region (State.rejoin); at the start of a pass the groups whose time has come rejoin, and a segment ends at the step
in whose end (its validation and checkpoint included) the next rejoin falls, as at a write's end (under stragglers
stepkernel.run stops there), so each step runs with the groups of its start; of each executed step's base compute the
running groups' share is pending (productive once committed) and the rest, with the mode's overhead, degraded (a drawn
step's time above the base step time is the straggler bucket's whole). A failure of an elastic cause with enough groups
left is a unit of its own (_DROP): no restart, no rollback but its own step's work. They draw nothing. With
servers the groups are blocks of the job's servers (State.srv_group with pools: a replacement takes the place of the
server it replaces); the drop's decision counts the groups of the step's failing servers, a burst's found by its
draws without striking (kernel.servers.burst: the unit makes the same draws again), so that a cut before the unit
changes nothing; the unit sends the failed servers to repair and takes their replacements as a restart does, puts
the groups' servers out (their ends kernel.servers.OUT: they neither age nor fail, bursts pass them over) and sets
each group's rejoin ``rejoin_us`` after its last replacement is ready (State.group_ready); a rejoin gives its servers
new lifetimes, and a restart or a job's end brings every group back and waits for their replacements.

Pending compute (State.pending_us): each executed step adds the step time, a checkpoint commits it, a rollback
loses what is after the checkpoint rolled back to; with committed SDCs the compute after the newest clean
checkpoint is kept as steps times the step time (so core.retarget refuses a new step time while it is pending).

The kernel produces no Event objects: core.advance builds a job's JobResult from its counters (core.py), and
with ``trace`` the kernel records each interruption and SDC verdict as a row of a buffer (record, trace.py).
Its checks: the per-step oracle in distribution (oracle.py), tick-size invariance, the golden paths the Python
walks it replaced left behind (tests/engine/golden_paths.py), and ``NUMBA_DISABLE_JIT=1`` (the same source as
Python) against the compiled code.

Per call: per replica a seek of each stream to its current draw (O(log n)); per event a few dozen integer
operations, no Python.

Work: each row counts the work it does, by ``budget``'s weights (BUDGET_FIELDS; the caller's cost model: the
engine reads no clock), into ``work``: the row's share of the call, each pass of the loop, each server event, each
server of a pass over the servers, each straggler-drawn step. With a limit (``budget[0]`` >= 0) a row that has
spent it stops at the next pass of the loop once it has completed a unit: between two units, its clock at the end
of the last one, exactly the state a call with ``until`` that time gives (no unit ends between the two, and the
next one ends after it), so a later call carries on with the result of one uncut call; the rows after it then
go no further than that time (the caller brings the rows before it back to it: replicas.advance_replicas). A
row always completes at least one unit (or reaches ``until``) per call. A unit itself is not cut: one burst's
servers, one segment's straggler-drawn steps.
"""

from __future__ import annotations

import numpy as np

from simd.engine import pcg, stepkernel
from simd.engine import trace as tr
from simd.engine.hazard import NEVER
from simd.engine.jit import njit
from simd.engine.kernel import draws, late, quiet, restarts, servers
from simd.engine.kernel.plan import PF, PI, seg
from simd.engine.kernel.record import record
from simd.engine.layout import Pos, Stream, Tot

_HARD, _FOUND, _DETECTED, _BAKED, _STEP, _MIGRATE, _DROP = range(7)  # the unit's kinds
# ``budget``'s entries: a row's work limit (negative: none), then the weight of each kind of work (module
# docstring, "Work"): a row in a call, a server in a pass over the servers (the trees' builds, a burst's count of
# the job's servers), a unit (a loop's pass: a segment and the unit that ends it), a server event (a server's
# failure, a burst's pick, a repair's end), a straggler-drawn step
BUDGET_FIELDS = ("limit", "row", "row_server", "unit", "server", "step")


@njit(nogil=True)  # nogil: the daemon's HTTP threads answer scrapes while a tick runs
def advance_all(until, max_jobs, pos_rows, tot_rows, start_rows, aux_rows, words_rows, plan, tables, hq, budget,
                work, prefix, trace):
    """Every replica (row) to ``until``, or to ``max_jobs`` jobs complete in total (>= 0); see the module docstring.
    ``plan``: kernel.plan.arrays' four arrays; ``tables``: the step-time tables (stepkernel.draw's; placeholders without
    stragglers); ``hq``: scratch, one entry per histogram bucket. ``budget``: the work model (BUDGET_FIELDS: a
    row's limit, negative for none, and the weight of each kind of work, in any unit); ``work``: per row, the work
    done, written (module docstring, "Work"). Returns 0, or with a ``prefix`` that has steps (crn.py's window of
    step durations, for one replica: cumulative durations ``pd``, buckets ``pb`` and bucket counts ``ph`` of executed
    steps p0 .. p0 + len(pd) - 1) the executed step the next segment needs when the window ends before
    it: the replica's state is then written as between two calls (its clock untouched) and a call with the window
    extended carries on from there, with the result of one uninterrupted call. The prefix holds one job's durations
    from g = 0 (the slow ranks in its first slow_steps), so it serves a replica's first job only, without
    committed SDCs (no detector's finding to meet); a ``prefix`` without steps (loopcall.NO_PREFIX) is none. With
    ``trace`` (trace.py's rows and counter; one replica) every interruption and SDC verdict is recorded; a buffer
    without rows records none. Neither is None: an empty window and an empty buffer keep every call (loopcall's,
    crn.py's, traced or not) one signature, compiled once (each None would be a second whole compile of this
    function, ~45 s of CPU from cold; the branches on their lengths cost nothing measurable per job: docs/engine.md,
    "Compiling the kernels"). The loop over rows is in this function, not a call of a per-row one: numba compiled
    the per-row function, then optimised it again inlined into the loop (1.4 s of a cold start, measured with numba's
    compile timers)."""
    ints, floats, ivec, fvec = plan
    ha, hb, hc, hf, sa, sb, sc, sf, base, bounds = tables
    pd, pb, ph, p0 = prefix
    has_prefix = len(pd) > 0
    step_us, shadow_us, ckpt_us, val_us = ints[PI.step_us], ints[PI.shadow_us], ints[PI.ckpt_us], ints[PI.val_us]
    V, C, H, target = ints[PI.val_every], ints[PI.ckpt_every], ints[PI.hyper_every], ints[PI.target]
    restart, load_us = ints[PI.sdc_restart_us], ints[PI.load_us]  # load_us: a rollback's load of a checkpoint
    write_us, slow_ppm = ints[PI.write_us], ints[PI.write_slow_ppm]  # asynchronous saves' writes (0: none)
    p_fail = floats[PF.save_fail]  # P(a save fails)
    p_corrupt = floats[PF.corrupt_load]  # P(a load finds its checkpoint corrupt)
    # the ring keeps the newest ``retention`` checkpoints (with committed SDCs those holding the SDC among them: the
    # copies of a step at or after ``onset_step``)
    keep = p_corrupt != 0.0
    # a memory tier (M 0: none): its interval (a divisor of C), blocking, load; copies of a shard, groups' jump
    M, mem_us, mem_load = ints[PI.mem_every], ints[PI.mem_us], ints[PI.mem_load_us]
    copies, jump, pm = ints[PI.mem_copies], ints[PI.mem_jump], floats[PF.mem_corrupt]
    pfm = floats[PF.mem_save_fail]  # P(a memory tier's save fails): draw g of "tier-save-fail" for executed step g
    tw_us = ints[PI.mem_write_us]  # a memory tier save's write after its blocking (0: durable when it ends)
    tk = ints[PI.mem_keep]  # the tier's copies kept: above 1, the ``tier`` aux region and every tier point a unit
    # two memory tiers (docs/model.md, "Two memory tiers"; L 0: one or none): the local tier under the peer one, its
    # interval (a divisor of M), blocking, load, P(a load finds it corrupt), P(a save fails), write, holders and jump;
    # every point of the local tier a unit, its copies the ``low`` aux region, the peer tier's the ``tier`` one
    L, low_us, low_load = ints[PI.low_every], ints[PI.low_us], ints[PI.low_load_us]
    pl, pfl, lw_us = floats[PF.low_corrupt], floats[PF.low_save_fail], ints[PI.low_write_us]
    lcopies, ljump = ints[PI.low_copies], ints[PI.low_jump]
    rk = tk > 1 or L != 0  # the (peer) tier's copies in its ring, every point of the lowest tier a unit
    U = L if L else M  # the lowest tier's interval
    committed, window, retention = ints[PI.committed] != 0, ints[PI.hyper_window], ints[PI.retention]
    shadow_kind, bucket = ints[PI.shadow_kind], ints[PI.step_bucket]
    o_interr, o_interr_type = ints[PI.tot_interruptions], ints[PI.tot_interruptions_by_type]
    o_onset_type, o_finds, o_hist = ints[PI.tot_sdc_onsets_by_type], ints[PI.tot_detector_finds], \
        ints[PI.tot_step_hist]
    stop_cum, stop_det = seg(fvec, ints, PI.stop_cumulative), seg(ivec, ints, PI.stop_detect_us)
    stop_rst = seg(ivec, ints, PI.stop_restart_us)
    cause_stays = seg(ivec, ints, PI.cause_stays)  # per cause: 1 when its server stays in the job
    cause_jit, jit_us = seg(ivec, ints, PI.cause_jit), ints[PI.jit_us]  # per cause: 1 when the job saves just in time
    jit_share = floats[PF.jit_share]  # ... after this share of its failures (one draw of "jit" per failure when < 1)
    # per cause: an in-process restart first, a crash loop (kernel/restarts.py; empty: the causes' restarts alone)
    cause_rec = seg(ivec, ints, PI.cause_recovery)
    rec_on, ip_us, p_ip = len(cause_rec) > 0, ints[PI.inproc_us], floats[PF.inproc_ok]
    p_rf, rf_limit, esc_us = floats[PF.restart_fail], ints[PI.restart_limit], ints[PI.escalation_us]
    o_att = ints[PI.tot_restart_attempts]
    # live migration: per cause the share of its failures flagged ahead (empty: none), a migration's pause
    cause_pred, migrate_us = seg(fvec, ints, PI.cause_predicted), ints[PI.migrate_us]
    mig_on = len(cause_pred) > 0
    hard_type_cum, sdc_type_cum = seg(fvec, ints, PI.hard_type_cumulative), seg(fvec, ints, PI.sdc_type_cumulative)
    # committed SDCs' detectors (late.py)
    det_kind, det_scale = seg(ivec, ints, PI.detector_kind), seg(fvec, ints, PI.detector_scale_us)
    det_sigma, det_cov = seg(fvec, ints, PI.detector_sigma), seg(fvec, ints, PI.detector_coverage)
    # elastic replica groups (E 0: none): per cause 1 when its failure drops its group, the fewest groups left
    # running, a dropped group's rejoin after its failure's detection, the overhead of every step (degraded bucket)
    E, e_min, rejoin_us, ovh_us = ints[PI.elastic_groups], ints[PI.elastic_min], ints[PI.rejoin_us], \
        ints[PI.elastic_overhead_us]
    cause_el = seg(ivec, ints, PI.cause_elastic)
    su = step_us + shadow_us + ovh_us
    # a memory tier's write that ends before the tier's next point (W within M - 1 steps of the base step time, the
    # least a step lasts: stragglers only lengthen it): while none is in flight the tier's points stay inside the
    # quiet steps, each save's write durable before the next save and the newest one's in flight after them if its
    # end is not reached (``_tier_newest``; not under hyper-checkpointing, whose windows' lattice is not C's)
    tq = tw_us != 0 and not rk and not committed and H == 0 and E == 0 and M < C and tw_us <= (M - 1) * step_us
    hard_log1m, sdc_log1m = floats[PF.hard_log1m], floats[PF.sdc_log1m]
    nd = len(det_kind)
    # servers (servers.py): their table, lifetimes, rate multipliers
    nsrv, tree_p = ints[PI.table], ints[PI.tree_p]
    rate_shape = floats[PF.rate_shape]
    # capacity (servers.py): pools of standbys and spares, repairs
    cap, n_job, W, preempt = ints[PI.cluster] > 0, ints[PI.servers], ints[PI.standbys], ints[PI.preempt_us]
    withheld, host_us, gang = ints[PI.spares_withheld], ints[PI.host_selection_us], ints[PI.gang] != 0
    # (a repair's laws: _repair reads them from the plan)
    # relapses (servers.py): P(a repair does not hold); a repair's draws of the repair stream with pools
    relapse_p = floats[PF.relapse_p]
    n_rd = 5 if relapse_p > 0.0 else 4
    # diagnosis and retirement (servers.py)
    diagnose, diag_p, mis_p = ints[PI.diagnose] != 0, floats[PF.diagnosis], floats[PF.misattribution]
    retire_k, retire_us = ints[PI.retire_after], ints[PI.retire_window_us]
    # bursts (servers.py): several servers struck in one step
    burst_log1m, burst_q, burst_domain = floats[PF.burst_log1m], floats[PF.burst_q], ints[PI.burst_domain]
    rp = seg(ivec, ints, PI.replay)  # replay (servers.py): the log's fault steps (empty: none)
    rr = seg(fvec, ints, PI.replay_repair_us)  # and their repair times (empty: the repair model's)
    sched = seg(fvec, ints, PI.rate_schedule)  # operational time (servers.py): the rate schedule (empty: none)
    ncl = nsrv if cap else 0  # the cluster's servers (0: no pools)
    # scratch, rebuilt for every replica (kernel/servers.py): the tree over the servers' ends of lifetime, and with
    # pools each pooled server's key (its index if a standby, the cluster's size plus it if a spare, NEVER
    # otherwise) and the trees over the repairs' ends and over those keys
    nt = 2 * tree_p if cap else 0
    tree, akey = np.empty(2 * tree_p, dtype=np.int64), np.empty(ncl, dtype=np.int64)
    rtree, atree = np.empty(nt, dtype=np.int64), np.empty(nt, dtype=np.int64)
    jcnt = np.empty(nt, dtype=np.int64)  # with pools, the count tree of the job's servers (servers.nth_job_counted)
    # a memory tier's loss (_tier_lost): a walk's stack over the servers' tree, the failed holders of each group
    stk = np.empty(2 * tree_p + 2 if M and nsrv else 0, dtype=np.int64)
    gcount = np.zeros(ints[PI.servers] if M and nsrv else 0, dtype=np.int64)
    gbase = np.empty(ints[PI.servers] if M and nsrv else 0, dtype=np.int64)
    gfail = np.empty(ints[PI.servers] if M and nsrv else 0, dtype=np.int64)
    stb = np.empty(W if gang else 0, dtype=np.int64)  # a gang re-scheduling's new standbys (servers.staff_standbys)
    mstk = np.empty(2 * tree_p + 2 if mig_on else 0, dtype=np.int64)  # a migration's walks and its servers
    # elastic replica groups with servers (docs/model.md): the job's servers in E blocks of ``gs``, a dropped group's
    # servers out of the job until it rejoins (their ends servers.OUT); scratch: a failure's servers (and a burst's), a
    # walk's stack, per group hit or coming back a flag, its replacements' ready time, whether one was re-scheduled,
    # and the groups a drop hits in order
    el_srv = E > 0 and nsrv > 0
    gs = n_job // E if el_srv else 1
    fsv = np.empty(nsrv if el_srv or burst_log1m != 0.0 else 0, dtype=np.int64)
    estk = np.empty(2 * tree_p + 2 if el_srv else 0, dtype=np.int64)
    ghit, gbk = np.zeros(E if el_srv else 0, dtype=np.int64), np.zeros(E if el_srv else 0, dtype=np.int64)
    gscr, gmv = np.zeros(E if el_srv else 0, dtype=np.int64), np.zeros(E if el_srv else 0, dtype=np.int64)
    gl = np.zeros(E if el_srv else 0, dtype=np.int64)
    need = 0
    lim, w_row, w_rsrv, w_unit, w_srv, w_step = budget[0], budget[1], budget[2], budget[3], budget[4], budget[5]
    for r in range(pos_rows.shape[0]):
        used = w_row + w_rsrv * (nsrv + ncl)  # the call's share of a row: the seeks, the trees' builds
        units = 0
        pos, tot, start, aux, words = pos_rows[r], tot_rows[r], start_rows[r], aux_rows[r], words_rows[r]
        ring = seg(aux, ints, PI.aux_ring)
        wh, ws, wc, wht, wst, wd = (words[Stream.hard], words[Stream.sdc], words[Stream.cause], words[Stream.hard_type],
                                    words[Stream.sdc_type], words[Stream.detect])

        t, g, step, last, corrupted = pos[Pos.t], pos[Pos.g], pos[Pos.step], pos[Pos.last_ckpt], pos[Pos.corrupted] != 0
        pending = pos[Pos.pending_us]
        job_t, job_g = pos[Pos.job_start_t], pos[Pos.job_start_g]
        hyper_end, anchor, n_corrupt = pos[Pos.hyper_end], pos[Pos.hyper_anchor], pos[Pos.n_corrupt]
        # under the reference semantics the newest clean checkpoint is the last one (the State keeps 0 then)
        clean = pos[Pos.clean_ckpt] if committed else last
        deadline, onset_step, detector = pos[Pos.sdc_deadline], pos[Pos.sdc_onset], pos[Pos.sdc_detector]
        hi, hp, si, sp = pos[Pos.hard_i], pos[Pos.hard_p], pos[Pos.sdc_i], pos[Pos.sdc_p]
        head, cnt = pos[Pos.ring_head], pos[Pos.ring_n]
        # with corrupt loads: the ring has held ``retention`` since the job was last at step 0 (State.ring_filled)
        filled = pos[Pos.ring_filled] != 0
        # an asynchronous save in flight: when its write ends (0: none), its job step, whether it holds the SDC
        wend, wstep, wsdc = pos[Pos.write_end], pos[Pos.write_step], pos[Pos.write_sdc] != 0
        wfail, wsf, sfi = pos[Pos.write_fails] != 0, words[Stream.save_fail], pos[Pos.save_draws]
        # corrupt loads: the "corrupt" stream's draws made, the highest committed step above ``last`` (0: none)
        wcr, cri, hw = words[Stream.corrupt], pos[Pos.corrupt_draws], pos[Pos.hw]
        wip, wrf, wpr = words[Stream.inproc], words[Stream.restart_fail], words[Stream.predict]
        plast, load_end = pos[Pos.persist_last], pos[Pos.load_end]  # a memory tier (State.persist_last, load_end)
        # ... beside committed SDCs (State.persist_clean, tier_clean; ``clean`` is then the newest clean one taken)
        pclean, tclean = pos[Pos.persist_clean], pos[Pos.tier_clean]
        jit_end = pos[Pos.jit_end]  # a just-in-time save beside a memory tier (State.jit_end)
        # a memory tier's save in flight: when its write ends (0: none), its job step
        twend, twstep = pos[Pos.tier_write_end], pos[Pos.tier_write_step]
        twfail = pos[Pos.tier_write_fails] != 0  # ... whether it fails (drawn at its save)
        # a memory tier keeping more than one copy: its copies' job steps, oldest first from ``th`` (State.tier_ckpts)
        tring, th, tc = seg(aux, ints, PI.aux_tier), pos[Pos.tier_head], pos[Pos.tier_n]
        # two tiers: the local tier's copies (State.low_ckpts) and its save in flight (State.low_write_*)
        lring, lh, lc = seg(aux, ints, PI.aux_low), pos[Pos.low_head], pos[Pos.low_n]
        lwend, lwstep, lwfail = pos[Pos.low_write_end], pos[Pos.low_write_step], pos[Pos.low_write_fails] != 0
        # elastic replica groups: each group's rejoin time (0: running), the groups out, the first rejoin among them
        rj = seg(aux, ints, PI.aux_rejoin)
        # ... with servers: each group's last replacement ready (State.group_ready), each server's group (srv_group)
        grd, grp = seg(aux, ints, PI.aux_ready), seg(aux, ints, PI.aux_group)
        down, rmin = 0, NEVER
        for j in range(len(rj)):
            if rj[j]:
                down += 1
                rmin = min(rmin, rj[j])
        zero = np.uint64(0)
        # each stream's generator at the draw of its next element's gap (index + 1); the others at no draw yet (-1)
        hh, hl = pcg.seek(wh, hi + 1) if hard_log1m != 0.0 else (zero, zero)
        sh, sl = pcg.seek(ws, si + 1) if sdc_log1m != 0.0 else (zero, zero)
        c_at, ch, cl = -1, zero, zero
        ht_at, hth, htl = -1, zero, zero
        st_at, sth, stl = -1, zero, zero
        d_at, dh, dl_ = -1, zero, zero
        has_st, slow_steps, slow_ranks = ints[PI.has_st] != 0, ints[PI.slow_steps], ints[PI.slow_ranks]
        wx = words[Stream.step_times]
        xdx = wx[4] == np.uint64(1)
        # executed steps up to this one have the slow ranks; NEVER: always
        slow_limit = job_g + slow_steps if slow_steps < NEVER else NEVER
        x_at, xh, xl = -1, zero, zero  # the straggler stream: draws made (= the executed step drawn last)
        # servers (kernel/servers.py): each one's end of lifetime, the tree over them, the lifetime stream
        srv, mult = seg(aux, ints, PI.aux_srv), seg(aux, ints, PI.aux_mult)
        wlf, li = words[Stream.lifetime], pos[Pos.lifetimes]
        rg, wrg = seg(aux, ints, PI.aux_regime), words[Stream.regime]  # the regime cursor and stream (servers.py)
        lfh, lfl = zero, zero
        role, rep, fixed = seg(aux, ints, PI.aux_role), seg(aux, ints, PI.aux_rep), seg(aux, ints, PI.aux_fixed)
        wrp, ri, wait_until = words[Stream.repair], pos[Pos.repair_draws], pos[Pos.wait_until]
        rph, rpl = zero, zero
        rel = seg(aux, ints, PI.aux_relapse)  # relapses (servers.py): each server's next lifetime short (1)
        if not cap and relapse_p > 0.0:  # (without pools a relapse is the repair stream's only draw)
            rph, rpl = pcg.seek(wrp, ri)
        blamed = seg(aux, ints, PI.aux_blamed)
        wdg, di = words[Stream.diagnosis], pos[Pos.diagnosis_draws]
        dgh, dgl = pcg.seek(wdg, di) if diagnose else (zero, zero)
        n_sb, n_sp, n_ret = 0, 0, 0  # standbys and spares in the pools, servers retired
        wb, wbp = words[Stream.burst], words[Stream.burst_pick]
        # (pk: not bk, the straggler sampler's bucket below)
        bi, bp, pk = pos[Pos.burst_draws], pos[Pos.burst_at], pos[Pos.burst_picks]
        bh, bl = pcg.seek(wb, bi) if burst_log1m != 0.0 else (zero, zero)
        pbh, pbl = pcg.seek(wbp, pk) if burst_log1m != 0.0 else (zero, zero)
        if cap:
            if role[0] == 0:  # the cluster laid out: the job's servers, then the standbys, then the spares
                for i in range(ncl):
                    role[i] = servers.start_role(i, n_job, W)
                    rep[i] = NEVER
                    if len(grp):  # the elastic groups: blocks of the job's servers
                        grp[i] = i // gs + 1 if i < n_job else 0
            for i in range(ncl):
                akey[i] = i if role[i] == servers.STANDBY else ncl + i if role[i] == servers.SPARE else NEVER
                if role[i] == servers.STANDBY:
                    n_sb += 1
                elif role[i] == servers.SPARE:
                    n_sp += 1
                elif role[i] == servers.RETIRED:
                    n_ret += 1
            servers.build(rtree, rep, ncl, tree_p)
            servers.build(atree, akey, ncl, tree_p)
            servers.build_jobs(jcnt, role, ncl, tree_p)
            rph, rpl = pcg.seek(wrp, ri)
        if nsrv:
            if len(mult) and mult[0] == 0:  # the servers' gamma rate multipliers, drawn once (servers.py)
                for i in range(nsrv):
                    mult[i] = servers.gamma_multiplier(words[Stream.server_rate], i, rate_shape)
            lfh, lfl = pcg.seek(wlf, li)
            if li == 0:  # every server of the job starts new at g (the simulation's start, or a drill's new epoch)
                for i in range(nsrv):
                    if cap and role[i] != servers.JOB:
                        srv[i] = NEVER
                        continue
                    if el_srv and rj[servers.group_of(grp, i, gs)]:
                        srv[i] = servers.OUT  # (a dropped group's servers: out until it rejoins)
                        continue
                    lfh, lfl, srv[i] = servers.new_end(
                        i, g, wlf, lfh, lfl, ints, floats, mult, fixed, rp, rg, wrg, sched, rel)
                    li += 1
            servers.build(tree, srv, nsrv, tree_p)
            hp = srv[tree[1]]
        clock = until
        need = 0

        while True:
            if wend and wend <= t:  # the save in flight was written before this unit starts: durable
                wend, last, clean, pending, n_corrupt, head, cnt, hw, plast, pclean = _durable(
                    tot, ring, trace, t, wstep, wsdc, wfail, last, clean, pending, n_corrupt, head, cnt,
                    step_us, hw, keep, 0, plast, M, pclean)
            if twend and twend <= t:  # ... and a memory tier's
                if committed:  # (a write that holds the SDC commits it)
                    last, clean, pending, hw, tclean = _tier_durable_sdc(
                        tot, trace, t, twstep, twfail, corrupted and onset_step <= twstep, last, clean, pending, hw,
                        n_corrupt, tclean, step_us, 0)
                else:
                    last, clean, pending, hw = _tier_durable(tot, twstep, twfail, last, clean, pending, hw, step_us, 0)
                twend = 0
                if rk and not twfail:  # (its copies: the newest)
                    th, tc = late.ring_add(tring, th, tc, twstep)
            if lwend and lwend <= t:  # ... and the local tier's (two tiers)
                last, clean, pending, hw, lh, lc = _low_durable(
                    tot, trace, t, lwstep, lwfail, committed and corrupted and onset_step <= lwstep, last, clean,
                    pending, hw, n_corrupt, step_us, 0, lring, lh, lc)
                lwend = 0
            if keep:
                filled = _filled(filled, cnt, retention, step)
            if max_jobs >= 0 and tot[Tot.jobs_completed] >= max_jobs:
                clock = t  # halted: the clock stays at the end of the last job
                break
            if 0 <= lim <= used and units:  # the row's work spent: it stops at the end of its last unit, the state
                clock = t  # advance(state, t) gives (module docstring, "Work"), and the rows after it stop there too
                until = min(until, t)
                break
            units += 1
            used += w_unit
            if jit_end > t:  # a just-in-time save beside a memory tier (checkpoint bucket), before the recovery's load
                if jit_end > until:
                    break
                tot[Tot.checkpoint_us] += jit_end - t
                t = jit_end
            if load_end > t:  # a recovery loads the checkpoint of the tier it chose (restart bucket)
                if load_end > until:
                    break
                tot[Tot.restart_us] += load_end - t
                tot[Tot.load_us] += load_end - t
                t = load_end
            if wait_until > t:  # the job stands still until its replacement servers are there (capacity)
                if wait_until > until:
                    break
                tot[Tot.waiting_us] += wait_until - t
                t = wait_until
            if down and rmin <= t:  # the dropped groups healed by now rejoin: this step runs with them
                rmin = NEVER
                for j in range(E):
                    if rj[j] and rj[j] <= t:
                        rj[j] = 0
                        down -= 1
                        tot[Tot.elastic_rejoins] += 1
                        if el_srv:  # its servers back in the job, each a new lifetime
                            lfh, lfl, k2, k3 = servers.group_back(j, g, srv, tree, tree_p, role, grp, gs, nsrv, wlf,
                                                                  lfh, lfl, ints, floats, mult, fixed, rp, rg, wrg,
                                                                  sched, rel)
                            li += k2
                            used += w_srv * k3
                            grd[j] = 0
                            hp = srv[tree[1]]
                    elif rj[j]:
                        rmin = min(rmin, rj[j])
            # of a step's compute, what the running groups do: productive (or rolled back), the rest degraded
            pshare = step_us * (E - down) // E if E else step_us
            if H and g < hyper_end:  # hyper.lattice
                period, off, piece = H, anchor % H, hyper_end
            else:
                period, off, piece = C, 0, NEVER
            cL, cr = quiet.coinciding(period, off, M) if M else (0, 0)  # which of its points stand for a tier's save
            h = NEVER
            if nsrv:
                h = hp
                if burst_log1m != 0.0:  # the next burst: a geometric gap of executed steps
                    bh, bl, bi, bp = draws.past(wb, bh, bl, bi, bp, g, burst_log1m)
                    if bp < h:
                        h = bp
            elif hard_log1m != 0.0:
                hh, hl, hi, hp = draws.past(wh, hh, hl, hi, hp, g, hard_log1m)
                h = hp
            e = g + (target - step)
            if h < e:
                e = h
            if piece < e:
                e = piece
            s = NEVER
            if not corrupted:
                if sdc_log1m != 0.0:
                    sh, sl, si, sp = draws.past(ws, sh, sl, si, sp, g, sdc_log1m)
                    s = sp
                if s < e:
                    e = s
            elif n_corrupt == 0 and last == clean:  # not in a checkpoint yet (of either tier: a newer checkpoint
                # than the newest clean one holds it): the next validation or checkpoint point meets it
                q = off + ((step - off) // period + 1) * period
                if M and (step // M + 1) * M < q:  # (a memory tier's save too)
                    q = (step // M + 1) * M
                if V and (step // V + 1) * V < q:
                    q = (step // V + 1) * V
                if g + (q - step) < e:
                    e = g + (q - step)
            writing = wend > 0
            if write_us or writing or p_fail != 0.0 or keep:  # asynchronous, failing or kept saves: every checkpoint
                # point a unit (a write starts or waits there; a save's failure is drawn there; it joins the ring)
                q = off + ((step - off) // period + 1) * period
                if g + (q - step) < e:
                    e = g + (q - step)
            twriting = twend > 0
            if (tw_us and (twriting or not tq)) or rk:  # a memory tier's writes, or its copies kept: every one of
                # its points a unit (a write starts or waits there; the save joins its copies); two tiers: every
                # point of the local one (the peer tier's and the persistent ones among them)
                q = (step // U + 1) * U
                if g + (q - step) < e:
                    e = g + (q - step)
            # the first of a write's end, a memory tier write's end and a group's rejoin (NEVER: none): the segment
            # ends at the step in whose end (its validation and checkpoint included) it falls, the unit, so the next
            # one starts with the save durable or the group back
            tend = wend if writing else NEVER
            if twriting and twend < tend:
                tend = twend
            lwriting = lwend > 0
            if lwriting and lwend < tend:
                tend = lwend
            if down and rmin < tend:
                tend = rmin
            ppm = slow_ppm if writing else 0  # the steps of this segment start while a save writes: slower
            sw = su + step_us * ppm // 1000000
            n = e - g
            # the unit's step: its compute (shadow overhead and a write's slowdown included), its histogram bucket, the
            # slowdown in it
            du, unit_b, ux = sw, bucket, sw - su
            cut_quiet, k, acc, dsum = False, 0, 0, 0
            tsv = -1  # under stragglers the time of the quiet steps by the end of the tier's newest save among them
            if has_prefix:  # crn.py's window of step durations
                if job_g != 0 or g < p0 or committed or write_us or writing or M or E:
                    raise ValueError("the prefix path runs a replica's first job without committed SDCs, "
                                     "asynchronous saves or elastic groups, from a window that covers it")
                if e - p0 >= len(pd):
                    need = e
                    break
                i0 = g - p0
                k = n  # the quiet steps step + 1 .. step + k - 1 if they all fit, else the most that do
                acc = pd[i0 + k - 1] - pd[i0] + quiet.stretch(step, step + k - 1, shadow_us, ckpt_us, V, val_us, period,
                                                              off)
                if acc > until - t:
                    cut_quiet = True
                    lo, hi_ = 0, n - 2
                    while lo < hi_:
                        mid = (lo + hi_ + 1) // 2
                        if pd[i0 + mid] - pd[i0] + quiet.stretch(step, step + mid, shadow_us, ckpt_us, V, val_us,
                                                                 period, off) <= until - t:
                            lo = mid
                        else:
                            hi_ = mid - 1
                    k = lo + 1
                    acc = pd[i0 + lo] - pd[i0] + quiet.stretch(step, step + lo, shadow_us, ckpt_us, V, val_us, period,
                                                               off)
                dsum = pd[i0 + k - 1] - pd[i0]
                for b_ in range(len(hq)):
                    hq[b_] = 0
                quiet.counts(ph, pb, p0, g + k - 1, 1, hq)
                quiet.counts(ph, pb, p0, g, -1, hq)
                if not cut_quiet:  # the unit's step
                    du, unit_b = pd[e - p0] - pd[e - p0 - 1] + shadow_us, np.int64(pb[e - p0])
            elif has_st:  # the steps drawn one by one (stepkernel.run): quiet ones while they fit, up to the unit
                if x_at != g:
                    xh, xl = pcg.seek(wx, g)
                for b_ in range(len(hq)):
                    hq[b_] = 0
                # the unit: the segment's end, or the first step whose compute ends at or after a detector's finding
                due = deadline - t if corrupted and deadline < NEVER else NEVER
                slow = max(0, min(n - 1, slow_limit - g))
                left = tend - t if tend < NEVER else NEVER
                xh, xl, mq, acc, dsum, how, d, bk, xsum, tsv = stepkernel.run(
                    xh, xl, wx[2], wx[3], xdx, step, step + n - 1, until - t, period, off, ckpt_us, V, val_us, slow,
                    shadow_us + ovh_us, due, ha, hb, hc, hf, sa, sb, sc, sf, base, bounds, hq, ppm, left, M, mem_us)
                k = mq - step + 1  # the steps drawn (the last one not counted unless all fitted)
                used += w_step * k
                x_at = g + k - (1 if how == stepkernel.FITTED else 0)
                if how == stepkernel.FITTED:  # the segment's last step: the unit, unless its compute comes first
                    if g + n <= slow_limit:
                        xh, xl, d, bk = stepkernel.draw(xh, xl, wx[2], wx[3], xdx, sa, sb, sc, sf, base, bounds)
                    else:
                        xh, xl, d, bk = stepkernel.draw(xh, xl, wx[2], wx[3], xdx, ha, hb, hc, hf, base, bounds)
                    x_at = g + n
                if how == stepkernel.CUT:  # a quiet step does not fit: the steps before it are crossed
                    cut_quiet = True
                else:
                    n, e = k, g + k
                    ux = d * ppm // 1000000
                    du, unit_b = d + shadow_us + ovh_us + ux, bk
            else:
                if corrupted and deadline < NEVER and n > 1:  # a detector's finding before e?
                    budget = deadline - t
                    if budget <= sw:
                        j = 1
                    else:
                        j = quiet.fit(step, step + n, budget - sw - 1, sw, ckpt_us, V, val_us, period, off, M,
                                      mem_us, cL, cr) - step + 2
                    if j < n:
                        n, e = j, g + j
                if tend < NEVER and n > 1:  # ``tend`` falls in step j < n: the first whose end reaches it is the
                    # unit (with a persistent write in flight no checkpoint point comes before it: the segment ends at
                    # the next one)
                    j = quiet.fit(step, step + n - 1, tend - t - 1, sw, ckpt_us, V, val_us, period, off, M, mem_us,
                                  cL, cr) - step + 1
                    if j < n:
                        n, e = j, g + j
            m = step + n - 1  # the quiet steps are step + 1 .. m, the unit's is q = m + 1
            if has_st:
                quiet_us = acc
            else:
                nc = (m - off) // period - (step - off) // period
                nv = m // V - step // V if V else 0
                quiet_us = (n - 1) * sw + nc * ckpt_us + nv * val_us
                if M:  # the memory tier's saves (where no checkpoint is)
                    quiet_us += (m // M - step // M - quiet.on_both(step, m, nc, cL, cr)) * mem_us
            q = m + 1
            t1 = t + quiet_us + du  # the end of the unit's step
            onset = val = ck = False
            dl, det = deadline, detector
            stop, index = 0, 0
            kind, cost, ld, taken = _STEP, 0, 0, 0
            back_c, bad_c, cri_c = 0, 0, cri  # with corrupt loads: a recovery's checkpoint, those found corrupt
            jit = jit_bad = False  # a just-in-time save after the unit's failure; one that bakes the present SDC in
            mjit = False  # beside a memory tier: the survivors can save (whether they do waits for the tier's fate)
            rst, ipo, n_att, esc = 0, restarts.NOT_TRIED, 1, 0  # a hard failure's restart: its time, its path
            ckw, endw = 0, 0  # the unit's waits for a write in flight: at its checkpoint, at the job's end
            tkw = 0  # ... at a memory tier's save, for the tier's write in flight
            lkw = 0  # ... at the local tier's save (two tiers), for its write in flight
            # the checkpoint points among the quiet steps, and the newest of them (``newest_c``, when ``taken``)
            taken = (m - off) // period - (step - off) // period
            newest_c = off + ((m - off) // period) * period
            if load_us:  # a rollback in this unit loads the checkpoint it goes back to (``ld``), unless that is the
                # job's start (step 0); the newest one as the unit meets it, the quiet steps' included
                if last > 0 or taken > 0:
                    ld = load_us
            mk = mem_t = False  # the unit's step a memory tier's save; an SDC rollback's checkpoint in that tier
            mkf = False  # ... a save that fails
            lk = lkf = False  # two tiers: the unit's step a local tier's save; one that fails
            mem_bad = False  # ... found corrupt when loaded (the rollback goes on to the persistent checkpoint)
            # the tier's copy a recovery loads (0: none), its copies loaded, those found corrupt before it
            tgo, nl, tb = 0, 0, 0
            # two tiers: whether that copy is the local tier's, the local copies loaded, those found corrupt, the loads'
            # time (one tier: nl of the tier's)
            fl, nll, tbl, tpaid = False, 0, 0, 0
            last_u = plast_u = ok_u = nf_u = 0
            sk = 0  # (tq) the tier's newest save among the quiet steps when its write is still in flight at the unit
            if M:  # the newest checkpoint of either tier and the newest persistent one as the unit meets them
                if tq and not twriting:
                    sk = _tier_newest(step, m, M, C)
                    if sk and (tsv if has_st else quiet.stretch(step, sk, sw, ckpt_us, V, val_us, period, off, M,
                                                                mem_us, cL, cr)) + tw_us <= quiet_us:
                        sk = 0  # (its write durable before the unit)
                if pfm != 0.0:  # (the tier's newest save among the quiet steps that did not fail)
                    nf_u, ok_u = _tier_saves(words[Stream.tier_save_fail], g, step, m, M, period, off, pfm)
                    top = max(_tier_saves(words[Stream.tier_save_fail], g, step, sk - 1, M, period, off, pfm)[1] if sk
                              else ok_u, newest_c if taken else 0)
                    last_u = top if top > 0 else last
                else:
                    last_u = (m // M) * M if m // M > step // M else last
                    if sk and last_u == sk:  # (the save before it, durable, if among the quiet steps)
                        last_u = sk - M if sk - M > step else last
                plast_u = newest_c if taken else plast
                # (inside a hyper window the newest may be a lattice point that is no multiple of M)
                last_u = max(last_u, plast_u)
                mem_t = last_u > plast_u
                ld = mem_load if mem_t else load_us if last_u > 0 else 0
            drop = False  # a hard failure that drops its replica group (elastic)
            mig = no_sb = False  # a failure flagged ahead: migrated to warm standbys before its step, or none there
            if mig_on and h == e and not cut_quiet and not (burst_log1m != 0.0 and bp == e) and restarts.flagged(
                    hi, wc, stop_cum, wpr, cause_pred, shadow_kind):  # (a burst is not foreseen)
                # a standby for each server failing in the step: in the pool or back from repair by the migration
                mig = min(W, n_sb + servers.count_le(rtree, rep, tree_p, t + quiet_us, mstk)) >= \
                    servers.count_le(tree, srv, tree_p, e, mstk)
                no_sb = not mig
            if cut_quiet:
                pass  # ``until`` comes within the quiet steps: the unit is not reached
            elif mig:  # (docs/model.md, "Predicted failures migrated live")
                kind, cost = _MIGRATE, migrate_us
            elif h == e:  # a hard failure or a shadow disagreement: its kind (a cause, or the disagreement)
                kind, index = _HARD, hi
                if len(stop_cum) > 1:
                    if c_at != index:
                        ch, cl = pcg.seek(wc, index)
                    ch, cl, u = draws.uniform(wc, ch, cl)
                    c_at = index + 1
                    stop = draws.bucket(stop_cum, u)
                drop = E > 0 and cause_el[stop] != 0 and E - down > e_min  # its group dropped, enough left to go on
                if drop and el_srv:  # with servers, every group its servers are in drops (a burst's known by its
                    # draws, made again in the unit): enough left?
                    nf = servers.count_le(tree, srv, tree_p, e, estk, fsv)
                    if burst_log1m != 0.0 and bp == e:
                        _, _, _, nb, k2, k3 = servers.burst(role, jcnt, n_job, srv, tree, tree_p, e, nsrv, wbp, pbh,
                                                            pbl, pk, burst_q, burst_domain, fsv[nf:], False)
                        nf += nb
                        used += w_rsrv * nsrv * k2 + w_srv * k3
                    nh = 0
                    for k2 in range(nf):
                        x = servers.group_of(grp, fsv[k2], gs)
                        nh += 1 - ghit[x]
                        ghit[x] = 1
                    for k2 in range(nf):
                        ghit[servers.group_of(grp, fsv[k2], gs)] = 0
                    drop = E - down - nh >= e_min
                if not drop and stop != shadow_kind and cause_jit[stop]:  # the survivors save step m just in time (if
                    # they can: draw ``index`` of "jit"), unless the newest durable checkpoint is that step already
                    able = True
                    if jit_share < 1.0:
                        jh, jl = pcg.seek(words[Stream.jit], index)
                        jh, jl, u = draws.uniform(words[Stream.jit], jh, jl)
                        able = u <= jit_share
                    jit = able and m > (newest_c if taken else last)
                    jit_bad = jit and corrupted and not committed  # (reference semantics: the SDC in no checkpoint
                    # yet; committed SDCs: the save takes it, the rollback target all the same)
                    if jit and not jit_bad:
                        ld = load_us
                    if M:  # they save unless the newest checkpoint that survived is step m: known with the servers
                        mjit, jit, jit_bad = able, False, False
                if M:  # the tier recovered from is known once the failed servers are: its load waits (load_end)
                    ld = 0
                elif keep:  # the loads of the fallback chain (from the just-in-time save, durable in this unit)
                    back_c, loads, bad_c, cri_c = _fallback(ring, head, cnt, m if jit and not jit_bad else -1, wcr, cri,
                                                            p_corrupt)
                    ld = loads * load_us
                rst = stop_rst[stop]
                if rec_on and stop != shadow_kind and cause_rec[stop]:  # an in-process restart first, a crash loop
                    rst, ipo, n_att, esc = restarts.path(cause_rec[stop], index, wip, p_ip, ip_us, wrf, p_rf, rf_limit,
                                                         rst, esc_us)
                cost = du + stop_det[stop] + rst + ld + (jit_us if jit else 0)
                if drop:  # (docs/model.md, "Elastic replica groups"): the step lost, noticed, no restart
                    kind, cost, ld, rst = _DROP, du + stop_det[stop], 0, 0
            else:
                corr = corrupted
                if s == e:  # an onset (on a hard failure's step it is void)
                    onset = corr = True
                    dl, det = NEVER, 0
                    if committed and nd:  # the first detector to find it (late.py)
                        first = 2 * nd * si
                        if d_at != first:
                            dh, dl_ = pcg.seek(wd, first)
                        for k2 in range(nd):
                            dh, dl_, u_cov = draws.uniform(wd, dh, dl_)
                            dh, dl_, u_lat = draws.uniform(wd, dh, dl_)
                            if u_cov > det_cov[k2]:
                                continue
                            at = t1 + late.latency_us(det_kind[k2], det_scale[k2], det_sigma[k2], u_lat)
                            if at < dl:
                                dl, det = at, k2
                        d_at = first + 2 * nd
                val = V != 0 and q % V == 0
                if corr and dl <= t1:
                    if M and committed:  # found late (the quiet steps' saves included): the tier's clean copy (a tier
                        # save that took the SDC overwrote it), the newest clean persistent one, or the oldest retained
                        lfind = corrupted and (n_corrupt + taken > 0 or last_u > clean)
                        if lfind or (mem_t and (pm != 0.0 or rk)):  # the tiers' copies loaded first, newest first (a
                            # late find: the clean ones newer than the clean persistent one; two tiers: the local
                            # tier's newer than the peer tier's newest, clean for a late find, first)
                            c_above, c_below = (pclean, onset_step) if lfind else (plast_u, NEVER)
                            if L:
                                tgo, fl, nl, nll, tbl, cri_c = _two_chain(tring, th, tc, 0, lring, lh, lc, 0, c_above,
                                                                          c_below, wcr, cri, pm, pl)
                            else:
                                if rk:
                                    c_top = 0
                                elif lfind:  # (a tier save among them that did not fail overwrote its clean copy)
                                    c_top = 0 if (ok_u > 0 if pfm != 0.0 else m // M - step // M > quiet.on_both(
                                        step, m, taken, cL, cr)) else tclean
                                else:
                                    c_top = last_u
                                tgo, nl, cri_c = _tier_chain(tring, th, tc, c_top, c_above, c_below, wcr, cri, pm)
                            tb, mem_bad = nl + nll - (1 if tgo else 0), tgo == 0 and (nl + nll > 0 or not lfind)
                            ld = nl * mem_load + nll * low_load
                            if mem_bad and not lfind:  # then the newest persistent one (clean: no checkpoint holds it)
                                ld += load_us if plast_u > 0 else 0
                        if lfind and not tgo and keep:  # (the corrupt tier copies' loads paid first) down the ring
                            back_c, loads, bad_c, cri_c = _late_fallback(ring, head, cnt, onset_step, retention, wcr,
                                                                         cri_c, p_corrupt, filled)
                            ld += loads * load_us
                        elif lfind and not tgo:
                            ld += load_us if pclean > 0 or n_corrupt + taken >= retention else 0
                        elif not lfind and keep and (mem_bad or not mem_t):  # the persistent one with corrupt loads:
                            # the newest that loads
                            back_c, loads, bad_c, cri_c = _fallback(ring, head, cnt, -1, wcr, cri_c, p_corrupt)
                            ld = nl * mem_load + nll * low_load + loads * load_us
                    elif keep and n_corrupt:  # found late, with corrupt loads: down the ring (_late_fallback)
                        back_c, loads, bad_c, cri_c = _late_fallback(ring, head, cnt, onset_step, retention, wcr, cri,
                                                                     p_corrupt, filled)
                        ld = loads * load_us
                    elif keep:  # in no checkpoint yet: the newest checkpoint that loads
                        back_c, loads, bad_c, cri_c = _fallback(ring, head, cnt, -1, wcr, cri, p_corrupt)
                        ld = loads * load_us
                    elif n_corrupt and load_us:  # found late: back to the newest clean checkpoint, or to the oldest
                        # retained one (a step > 0), as below
                        ld = load_us if clean > 0 or n_corrupt + taken >= retention else 0
                    kind, cost = _FOUND, du + restart + ld
                elif val and corr and n_corrupt == 0 and last == clean:
                    if mem_t and (pm != 0.0 or rk):  # the memory tier's copies loaded: all corrupt? then the
                        # persistent one
                        if L:
                            tgo, fl, nl, nll, tbl, cri_c = _two_chain(tring, th, tc, 0, lring, lh, lc, 0, plast_u,
                                                                      NEVER, wcr, cri, pm, pl)
                        else:
                            tgo, nl, cri_c = _tier_chain(tring, th, tc, 0 if rk else last_u, plast_u, NEVER, wcr, cri,
                                                         pm)
                        tb, mem_bad = nl + nll - (1 if tgo else 0), tgo == 0
                        ld = nl * mem_load + nll * low_load
                        if mem_bad:
                            mem_t = False
                            ld += load_us if plast_u > 0 else 0
                    if keep and not mem_t:
                        back_c, loads, bad_c, cri_c = _fallback(ring, head, cnt, -1, wcr, cri_c, p_corrupt)
                        ld = loads * load_us + nl * mem_load + nll * low_load
                    kind, cost = _DETECTED, du + val_us + restart + ld
                else:
                    ck = (q - off) % period == 0
                    mk = M != 0 and not ck and q % M == 0
                    if mk and pfm != 0.0:  # a tier save that fails: paid, no checkpoint (an SDC not baked in)
                        mkf = _tier_saves(words[Stream.tier_save_fail], e - 1, q - 1, q, M, period, off, pfm)[0] > 0
                    lk = L != 0 and not ck and not mk and q % L == 0  # (a higher level's save stands for it)
                    if lk and pfl != 0.0:  # (draw e of "tier-save-fail": two tiers never save at one step)
                        lkf = _tier_saves(words[Stream.tier_save_fail], e - 1, q - 1, q, L, period, off, pfl)[0] > 0
                    kind, cost = _STEP, du + (val_us if val else 0) + (ckpt_us if ck else 0) + (mem_us if mk else 0)
                    if lk:
                        cost += low_us
                    if lk and lwriting:  # one write in flight per tier: the local save waits for its tier's
                        lkw = max(lwend - (t1 + (val_us if val else 0)), 0)
                        cost += lkw
                        if lwstep > last_u and not lwfail:  # a rollback now goes back to it
                            last_u = lwstep
                            mem_t = last_u > plast_u
                    if mk and twriting:  # one write in flight per tier: the save waits for it, which makes it durable
                        tkw = max(twend - (t1 + (val_us if val else 0)), 0)
                        cost += tkw
                        if twstep > last_u and not twfail:  # a rollback now goes back to it
                            last_u = twstep
                            mem_t = last_u > plast_u
                            ld = mem_load if mem_t else ld
                    if ck and writing:  # one write in flight: the save waits for it, which makes it durable
                        ckw = max(wend - (t1 + (val_us if val else 0)), 0)
                        cost += ckw
                        if M and not wfail:  # a rollback now goes back to it, or to a newer memory checkpoint
                            mem_t = last_u > wstep
                            ld = mem_load if mem_t else load_us
                        elif load_us and not wfail:  # a rollback now goes back to it
                            ld = load_us
                    if (ck or (mk and not mkf) or (lk and not lkf)) and corr and not committed:
                        durable_now = ck and writing and not wfail  # (a write is waited for at a checkpoint only)
                        if mem_t and (pm != 0.0 or rk):  # the memory tier's copies loaded: all corrupt? then the
                            # persistent one (its copies: with the tier's write durable at this save, that one first)
                            ptop = twstep if mk and twriting and not twfail else 0
                            if L:  # (the local tier's write durable at this save first too)
                                tgo, fl, nl, nll, tbl, cri_c = _two_chain(
                                    tring, th, tc, ptop, lring, lh, lc, lwstep if lk and lwriting and not lwfail else 0,
                                    wstep if durable_now else plast_u, NEVER, wcr, cri, pm, pl)
                            else:
                                tgo, nl, cri_c = _tier_chain(tring, th, tc, last_u if not rk else ptop,
                                                             wstep if durable_now else plast_u, NEVER, wcr, cri, pm)
                            tb, mem_bad = nl + nll - (1 if tgo else 0), tgo == 0
                            ld = nl * mem_load + nll * low_load
                            if mem_bad:
                                mem_t = False
                                ld += load_us if (wstep if durable_now else plast_u) > 0 else 0
                        if keep and not mem_t:  # the write in flight, durable at this checkpoint, first
                            back_c, loads, bad_c, cri_c = _fallback(ring, head, cnt, wstep if durable_now else -1, wcr,
                                                                    cri_c, p_corrupt)
                            ld = loads * load_us + nl * mem_load + nll * low_load
                        kind, cost = _BAKED, cost + restart + ld
                    elif q == target:  # the job's end waits for the write in flight (the one this unit starts)
                        if ck and write_us:
                            endw = write_us
                        elif writing and not ck:
                            endw = max(wend - (t + quiet_us + cost), 0)
                        cost += endw
            in_hyper = piece < NEVER
            cut = cut_quiet or t + quiet_us + cost > until
            mm = k - 1 if cut_quiet else n - 1  # under stragglers every quiet step drawn before the unit fitted
            if cut and not has_st:
                mm = quiet.fit(step, m, until - t, sw, ckpt_us, V, val_us, period, off, M, mem_us, cL, cr) - step
            if mm:  # the quiet steps step + 1 .. step + mm
                b = step + mm
                nq = (b - off) // period - (step - off) // period
                tot[Tot.steps_executed] += mm
                tot[Tot.shadow_us] += mm * shadow_us
                pending += mm * pshare
                if E:
                    tot[Tot.degraded_us] += mm * (step_us - pshare + ovh_us)
                if in_hyper:
                    tot[Tot.hyper_steps] += mm
                tot[Tot.checkpoints] += nq
                tot[Tot.checkpoint_us] += nq * ckpt_us
                if V:
                    nvq = b // V - step // V
                    tot[Tot.validations] += nvq
                    tot[Tot.validation_us] += nvq * val_us
                nmq = b // M - step // M - quiet.on_both(step, b, nq, cL, cr) if M else 0  # the memory tier's saves
                nmf, mok = 0, 0  # ... those that failed, the newest that did not (a persistent one may stand there)
                # (tq) the newest save among them: its step, whether it fails, its write's end, whether in flight after
                # them (the State keeps the step and the failure of the tier's newest save, written or not)
                tsb, tsbf, tsbe, tfl = 0, False, 0, False
                if nmq:
                    if pfm != 0.0:  # (the unit's own count when every quiet step fitted)
                        nmf, mok = (nf_u, ok_u) if b == m else _tier_saves(words[Stream.tier_save_fail], g, step, b, M,
                                                                            period, off, pfm)
                    else:
                        mok = (b // M) * M
                    tot[Tot.checkpoint_us] += nmq * mem_us
                    if tq and not twriting:
                        tsb = _tier_newest(step, b, M, C)
                        if pfm != 0.0:
                            tsbf = _tier_saves(words[Stream.tier_save_fail], g + tsb - 1 - step, tsb - 1, tsb, M,
                                               period, off, pfm)[0] > 0
                        tsbe = t + (tsv if has_st else quiet.stretch(step, tsb, sw, ckpt_us, V, val_us, period, off, M,
                                                                   mem_us, cL, cr)) + tw_us
                        tfl = tsbe > t + (acc if has_st else quiet_us if not cut else quiet.stretch(
                            step, b, sw, ckpt_us, V, val_us, period, off, M, mem_us, cL, cr))
                        if tfl:  # counted when written; the tier's newest copy the save before it
                            nmq -= 1
                            if pfm != 0.0:
                                nmf -= 1 if tsbf else 0
                                mok = _tier_saves(words[Stream.tier_save_fail], g, step, tsb - 1, M, period, off,
                                                  pfm)[1]
                            else:
                                mok = tsb - M if tsb - M > step else 0
                    tot[Tot.tier_saves] += nmq - nmf
                    tot[Tot.tier_saves_failed] += nmf
                if nq or mok:
                    pn = off + ((b - off) // period) * period if nq else 0  # the newest persistent one
                    newest = pn
                    if nq and M:
                        plast = pn
                    if mok > newest:
                        newest = mok
                    if not corrupted:
                        if E:  # (no fallback: hw 0) the steps after the checkpoint stay pending, each its share
                            tot[Tot.steps_committed] += newest - last
                            tot[Tot.productive_us] += pending - (b - newest) * pshare
                            pending = (b - newest) * pshare
                        else:
                            pending, hw = _commit(tot, newest, last, hw, pending, step_us)
                        last = clean = newest
                        if nq:
                            pclean = pn
                        if newest > pn:
                            tclean = newest
                    else:  # a committed SDC (the first checkpoint that took it was a unit): the newest to the ring
                        n_corrupt += nq
                        for i in range(min(nq, len(ring)) - 1, -1, -1):
                            head, cnt = late.ring_add(ring, head, cnt, pn - i * period)
                        last = newest
                        if nmq > nmf:  # the tier's clean copy overwritten by a save holding the SDC
                            tclean = 0
                if tsb:  # (tq) the newest save's write, in flight or written
                    twstep, twfail = tsb, tsbf
                    if tfl:
                        twend = tsbe
                xq = xsum if has_st else mm * (sw - su)  # their slowdown by a save's write (checkpoint bucket)
                tot[Tot.checkpoint_us] += xq
                tot[Tot.checkpoint_write_us] += xq
                if has_st:  # their time above the base step time, their buckets
                    t += acc
                    tot[Tot.straggler_us] += dsum - mm * step_us
                    for b_ in range(len(hq)):
                        tot[o_hist + b_] += hq[b_]
                    if slow_ranks and slow_steps < NEVER and g < slow_limit <= g + mm:  # the slow ranks replaced
                        tot[Tot.stragglers_replaced] += slow_ranks
                else:
                    t += quiet_us if not cut else quiet.stretch(step, b, sw, ckpt_us, V, val_us, period, off, M, mem_us,
                                                                cL, cr)
                    tot[o_hist + bucket] += mm  # every step in the plan's bucket
                step, g = b, g + mm
            if cut:
                break
            if kind == _MIGRATE:  # the failing servers moved to warm standbys before their step (no rollback): the
                # step runs in the next pass, on the standbys
                t0 = t
                t += cost
                tot[Tot.restart_us] += cost
                tot[Tot.migrations] += 1
                # the servers back from repair by then: to the standbys, then the spares
                n_sb, n_sp, k2 = servers.back_to_pools(rtree, rep, role, akey, atree, n_sb, n_sp, W, ncl, tree_p, t0)
                used += w_srv * k2
                nm = 0
                while srv[tree[1]] <= e:  # the servers failing in the step, in index order
                    i = tree[1]
                    mstk[nm] = i
                    nm += 1
                    srv[i] = NEVER
                    servers.update(tree, srv, i, tree_p)
                for k2 in range(nm):  # each to repair (the prediction names it: no diagnosis), a standby in
                    i = mstk[k2]
                    tot[Tot.server_failures] += 1
                    used += w_srv
                    rph, rpl = _repair(tot, plan, wrp, rph, rpl, i, t, -1.0, role, rep, fixed, jcnt, rtree, tree_p,
                                       rel)
                    ri += n_rd  # (the repair's draws, as a failure's)
                    j = atree[1]  # the lowest-numbered standby (one for each: counted when decided)
                    tot[Tot.replacements_standby] += 1
                    n_sb -= 1
                    akey[j] = NEVER
                    servers.update(atree, akey, j, tree_p)
                    role[j] = servers.JOB
                    servers.set_job(jcnt, j, 1, tree_p)
                    lfh, lfl, srv[j] = servers.new_end(j, g, wlf, lfh, lfl, ints, floats, mult, fixed, rp, rg, wrg,
                                                       sched, rel)
                    li += 1
                    servers.update(tree, srv, j, tree_p)
                hi += 1
                hp = srv[tree[1]]
                continue
            # the unit
            tot[Tot.steps_executed] += 1
            tot[Tot.shadow_us] += shadow_us
            pending += pshare
            if E:
                tot[Tot.degraded_us] += step_us - pshare + ovh_us
            tot[o_hist + unit_b] += 1
            tot[Tot.checkpoint_us] += ux
            tot[Tot.checkpoint_write_us] += ux
            if has_st:
                tot[Tot.straggler_us] += du - shadow_us - ovh_us - step_us - ux
                if slow_ranks and slow_steps < NEVER and e - 1 < slow_limit <= e:
                    tot[Tot.stragglers_replaced] += slow_ranks
            if in_hyper:
                tot[Tot.hyper_steps] += 1
            t += cost
            g, step = e, q
            if kind == _DROP:  # its group out until healed; the step's work lost, run again on the groups left
                tot[Tot.detection_us] += stop_det[stop]
                tot[Tot.elastic_drops] += 1
                tot[Tot.steps_recomputed] += 1
                tot[Tot.rollback_us] += pshare
                pending -= pshare
                step = q - 1
                if not el_srv:
                    for j in range(E):
                        if rj[j] == 0:
                            rj[j] = t + rejoin_us
                            break
                    down += 1
                    rmin = min(rmin, t + rejoin_us)
                    continue
                # with servers: every group its servers are in out, each failed server replaced as for a restart (a
                # standby, a spare, else the first back from repair), the group back ``rejoin_us`` after its last
                # replacement is ready (docs/model.md, "Elastic replica groups")
                tau = t  # the failure noticed
                if burst_log1m != 0.0 and bp == g:  # a burst: its servers' lifetimes end in this step
                    tot[Tot.burst_events] += 1
                    pbh, pbl, pk, nb, k2, k3 = servers.burst(role, jcnt, n_job, srv, tree, tree_p, g, nsrv, wbp, pbh,
                                                             pbl, pk, burst_q, burst_domain, fsv, True)
                    tot[Tot.burst_servers] += nb
                    used += w_rsrv * nsrv * k2 + w_srv * k3
                if cap:  # the servers back from repair by then: to the standbys (up to W), then the spares
                    n_sb, n_sp, k2 = servers.back_to_pools(rtree, rep, role, akey, atree, n_sb, n_sp, W, ncl, tree_p,
                                                           tau)
                    used += w_srv * k2
                nh, moved = 0, False
                while srv[tree[1]] <= g:  # every server whose lifetime ended in this step, in index order
                    i = tree[1]
                    f_step = srv[i]
                    tot[Tot.server_failures] += 1
                    used += w_srv
                    x = servers.group_of(grp, i, gs)
                    if ghit[x] == 0:
                        ghit[x], gscr[x], gmv[x] = 1, tau, 0
                        gl[nh] = x
                        nh += 1
                    srv[i] = servers.OUT  # out with its group (kept, or to repair below)
                    servers.update(tree, srv, i, tree_p)
                    blm = -1 if cause_stays[stop] else i
                    if diagnose and blm >= 0:  # the diagnosis: a scapegoat among the other servers of its group
                        dgh, dgl, other = _diagnosis(tot, wdg, dgh, dgl, diag_p, mis_p, gs)
                        di += 3
                        if other == -1:
                            blm = -1
                        elif other >= 0:
                            blm = servers.group_member(role, grp, gs, x, nsrv, other, i)
                            used += w_rsrv * ncl
                    if not cap or blm < 0:
                        continue
                    n_ret, rph, rpl, k2 = _blamed_out(tot, plan, blm, i, g, f_step, t1, srv, tree, tree_p, retire_k,
                                                      blamed, retire_us, ncl, n_ret, n_job, withheld, role, jcnt, rr,
                                                      rp, wrp, rph, rpl, rep, fixed, rtree, rel)
                    ri += k2
                    j, rdy, mv, n_sb, n_sp = _replacement(tot, atree, akey, rtree, rep, role, jcnt, ncl, n_sb, n_sp,
                                                          withheld, tau, preempt, tree_p)
                    if mv:
                        gmv[x] = 1
                    grp[blm] = 0
                    grp[j] = x + 1  # in the group of the server it replaces (perhaps itself), out with it
                    gscr[x] = max(gscr[x], rdy)
                    moved = moved or gmv[x] != 0
                rs = tau
                if moved and gang:  # re-scheduled as a gang: the warm standbys staffed too
                    rs, n_sb, n_sp, k2 = servers.staff_standbys(role, akey, atree, rep, rtree, stb, n_sb, n_sp, W,
                                                                withheld, ncl, tree_p, tau, preempt, tau)
                    used += w_srv * k2
                for k2 in range(nh):  # the groups hit: out, back once staffed (and their hosts selected)
                    x = gl[k2]
                    used += w_srv * servers.group_out(x, srv, tree, tree_p, role, grp, gs, nsrv)
                    rdy = max(gscr[x], rs) + host_us if gmv[x] else gscr[x]
                    grd[x], rj[x] = rdy, rdy + rejoin_us
                    rmin = min(rmin, rj[x])
                    ghit[x] = 0
                down += nh
                hi += 1
                hp = srv[tree[1]]
                continue
            gback, dready = False, 0  # with servers, the groups a restart brings back, their last replacement ready
            if down and kind != _STEP:  # a restart (a failure's, an SDC's rollback) brings every group back
                for j in range(E):
                    if el_srv and rj[j]:
                        gbk[j] = 1
                        dready = max(dready, grd[j])
                        grd[j] = 0
                    rj[j] = 0
                down, rmin = 0, NEVER
                gback = el_srv
                if gback and kind != _HARD:  # (a hard failure's brings them back once its servers are handled)
                    lfh, lfl, li, k2 = _groups_back(gbk, g, srv, tree, tree_p, role, grp, gs, nsrv, wlf, lfh, lfl,
                                                    li, ints, floats, mult, fixed, rp, rg, wrg, sched, rel)
                    used += w_srv * k2
                    hp = srv[tree[1]]
                    wait_until = max(wait_until, dready)  # the restart waits for their replacements
            if kind == _HARD:  # counted by cause (or as a disagreement), then the rollback to the last checkpoint
                if wend:  # the rollback aborts the writes in flight
                    tot[Tot.saves_aborted] += 1
                    wend = 0
                if twend:
                    tot[Tot.tier_saves_aborted] += 1
                    twend = 0
                lwend = _low_abort(tot, lwend)
                tot[Tot.detection_us] += stop_det[stop]
                tot[Tot.restart_us] += rst + ld
                tot[Tot.load_us] += ld
                if no_sb:  # flagged ahead, but no warm standby for it: an ordinary failure
                    tot[Tot.migrations_no_standby] += 1
                if rec_on and stop != shadow_kind:  # the restart's path (kernel/restarts.py)
                    tot[o_att + stop] += n_att
                    tot[Tot.escalations] += esc
                    if ipo == restarts.SUCCEEDED:
                        tot[Tot.in_process_ok] += 1
                    elif ipo == restarts.FAILED:
                        tot[Tot.in_process_failed] += 1
                if stop == shadow_kind:  # a disagreement: an SDC that set in and was found at once
                    tot[Tot.shadow_detected] += 1
                    tot[Tot.sdc_detected] += 1
                    tot[Tot.sdc_onsets] += 1
                    tot[o_onset_type] += 1
                    record(trace, t, tr.SDC_DETECTED, tr.SHADOW)
                else:
                    tot[o_interr + stop] += 1
                    record(trace, t, tr.INTERRUPTION, stop)
                    ty = 0
                    if len(hard_type_cum) > 1:  # its accelerator type (fleet.py)
                        if ht_at != index:
                            hth, htl = pcg.seek(wht, index)
                        hth, htl, u = draws.uniform(wht, hth, htl)
                        ht_at = index + 1
                        ty = draws.bucket(hard_type_cum, u)
                    tot[o_interr_type + ty] += 1
                if jit:  # the just-in-time save: durable at step q - 1 (its steps committed), or baking the SDC in
                    tot[Tot.jit_saves] += 1
                    tot[Tot.checkpoint_us] += jit_us
                    if jit_bad:
                        tot[Tot.sdc_baked] += 1
                        record(trace, t, tr.SDC_BAKED, tr.NONE)
                    elif corrupted:  # committed SDCs: the save holds the SDC (a persistent checkpoint, the ring's)
                        _baked_in(tot, trace, t, n_corrupt, last, clean)
                        n_corrupt += 1
                        head, cnt = late.ring_add(ring, head, cnt, q - 1)
                        last = q - 1
                    else:
                        pending, hw = _commit(tot, q - 1, last, hw, pending, step_us)
                        last = clean = q - 1
                        if keep:
                            head, cnt = late.ring_add(ring, head, cnt, q - 1)
                    if keep:  # (before the fallback below drops any)
                        filled = _filled(filled, cnt, retention, step)
                if nsrv and burst_log1m != 0.0 and bp == g:  # a burst: its servers' lifetimes end in this step
                    tot[Tot.burst_events] += 1
                    pbh, pbl, pk, nb, k2, k3 = servers.burst(role, jcnt, n_job, srv, tree, tree_p, g, nsrv, wbp, pbh,
                                                             pbl, pk, burst_q, burst_domain, fsv, True)
                    tot[Tot.burst_servers] += nb
                    used += w_rsrv * nsrv * k2 + w_srv * k3
                if M:  # a memory tier: lost with its holders or not, then the checkpoint recovered from and its load
                    if stop == shadow_kind or cause_stays[stop] or ipo == restarts.SUCCEEDED:  # an SDC found, a
                        # fault that takes no server down (or that an in-process restart cleared)
                        lost = lost_l = False
                    elif nsrv:  # the servers failing in this step (their own lifetimes and a burst's) lose theirs
                        lost = _tier_lost(tree, srv, tree_p, g, cap, jcnt, copies, jump, stk, gcount, gbase,
                                          gfail)
                        lost_l = L != 0 and _tier_lost(tree, srv, tree_p, g, cap, jcnt, lcopies, ljump, stk, gcount,
                                                       gbase, gfail)
                    else:  # one failure without servers: a local copy is lost, a peer group keeps the other copies
                        lost, lost_l = copies == 1, lcopies == 1
                    if lost:  # (every copy: they share the memory)
                        tot[Tot.tier_losses] += 1
                        tclean, th, tc = 0, 0, 0
                    if L and lost_l:  # (two tiers: the local one's copies; a peer loss is a local one)
                        tot[Tot.tier_losses] += 1
                        tot[Tot.low_losses] += 1
                        lh, lc = 0, 0
                    bad = False
                    if L:  # the newest checkpoint that survived, of any level
                        nv = max(plast, _newest(tring, th, tc), _newest(lring, lh, lc))
                    else:
                        nv = last if last > plast and not lost else plast
                    jd = mjit and q - 1 > nv  # saved just in time
                    if jd:  # step q - 1, a persistent checkpoint (or one baking the SDC in), before the load
                        tot[Tot.jit_saves] += 1
                        jit_end = t + jit_us
                        if corrupted and not committed:
                            tot[Tot.sdc_baked] += 1
                            record(trace, t, tr.SDC_BAKED, tr.NONE)
                            jd = False
                        elif corrupted:  # committed SDCs: the save holds the SDC, the recovery's target
                            _baked_in(tot, trace, t, n_corrupt, last, clean)
                            n_corrupt += 1
                            head, cnt = late.ring_add(ring, head, cnt, q - 1)
                            last = plast = q - 1
                        else:
                            pending, hw = _commit(tot, q - 1, last, hw, pending, step_us)
                            last = clean = plast = pclean = q - 1
                            if keep:
                                head, cnt = late.ring_add(ring, head, cnt, q - 1)
                        if keep:  # (before the fallback below drops any)
                            filled = _filled(filled, cnt, retention, step)
                    if jd:  # recovered from it (with corrupt loads, from the newest kept that loads)
                        if keep:
                            back_c, loads, bad_c, cri_c = _fallback(ring, head, cnt, -1, wcr, cri, p_corrupt)
                            ld = loads * load_us
                            last, clean, cnt, hw, cri, n_corrupt = _fell_back_sdc(
                                tot, back_c, bad_c, cri_c, last, clean, cnt, hw, committed, corrupted, onset_step,
                                n_corrupt)
                            plast = last
                            pclean = min(pclean, last)
                        else:
                            ld = load_us
                        if last > 0:
                            tot[Tot.recoveries_persistent] += 1
                        else:
                            tot[Tot.recoveries_start] += 1
                    else:  # the tier's checkpoint, or the persistent one
                        if L:  # the local tier's copies newer than the peer tier's newest, then the peer tier's
                            tgo, fl, nl, nll, tbl, cri = _two_chain(tring, th, tc, 0, lring, lh, lc, 0, plast, NEVER,
                                                                    wcr, cri, pm, pl)
                            tb = nl + nll - (1 if tgo else 0)
                            bad = tb > 0
                            tot[Tot.tier_loads_corrupt] += tb
                            tot[Tot.low_loads_corrupt] += tbl
                        elif last > plast and not lost:  # its copies newer than the persistent one, newest first
                            tgo, nl, cri = _tier_chain(tring, th, tc, 0 if rk else last, plast, NEVER, wcr, cri, pm)
                            tb = nl - (1 if tgo else 0)
                            bad = tb > 0
                            tot[Tot.tier_loads_corrupt] += tb
                        tpaid = nl * mem_load + nll * low_load
                        if tgo:
                            ld = tpaid
                            tot[Tot.recoveries_tier] += 1
                            if fl:
                                tot[Tot.low_recoveries] += 1
                            if tgo < clean:  # (newer copies found corrupt) below the work committed
                                hw = max(hw, clean)
                                clean = tgo
                            last = tgo
                        elif committed:  # back to the newest persistent checkpoint, which may hold the SDC (with
                            # corrupt loads the newest kept that loads), below the work committed when the tier's newest
                            # clean copy was lost (or found corrupt: paid, dropped)
                            if keep:
                                back_c, loads, bad_c, cri = _fallback(ring, head, cnt, -1, wcr, cri, p_corrupt)
                                ld = loads * load_us + tpaid
                                tot[Tot.loads_corrupt] += bad_c
                                if back_c == 0 and bad_c:
                                    tot[Tot.fallbacks_to_start] += 1
                                cnt = max(cnt - bad_c, 0)
                                if corrupted and back_c >= onset_step:  # one holding the SDC: it stays
                                    n_corrupt -= bad_c
                                elif corrupted:
                                    n_corrupt = 0
                                plast, pclean = back_c, min(pclean, back_c)
                            else:
                                ld = (load_us if plast > 0 else 0) + tpaid
                            if bad:
                                tclean = 0
                            if plast < clean:
                                hw = max(hw, clean)
                                clean = plast
                            last = plast
                            if last > 0:
                                tot[Tot.recoveries_persistent] += 1
                            else:
                                tot[Tot.recoveries_start] += 1
                        else:  # back to the newest persistent checkpoint (that loads: the corrupt ones dropped)
                            if keep:
                                back_c, loads, bad_c, cri_c = _fallback(ring, head, cnt, -1, wcr, cri, p_corrupt)
                                ld = loads * load_us
                            else:
                                back_c, bad_c, cri_c = plast, 0, cri
                                ld = load_us if plast > 0 else 0
                            ld += tpaid
                            last, clean, cnt, hw, cri = _fell_back(tot, back_c, bad_c, cri_c, last, cnt, hw)
                            plast = last
                            if last > 0:
                                tot[Tot.recoveries_persistent] += 1
                            else:
                                tot[Tot.recoveries_start] += 1
                    load_end = max(t, jit_end) + ld
                    if rk:  # the tier's copies above the checkpoint recovered to: found corrupt, or above a
                        # persistent fallback
                        tc = _tier_drop(tring, th, tc, last)
                    if L:
                        lc = _tier_drop(lring, lh, lc, last)
                elif keep:  # back to the newest checkpoint that loads (the corrupt ones dropped)
                    last, clean, cnt, hw, cri, n_corrupt = _fell_back_sdc(tot, back_c, bad_c, cri_c, last, clean, cnt,
                                                                          hw, committed, corrupted, onset_step,
                                                                          n_corrupt)
                tot[Tot.steps_recomputed] += step - last
                kept = (last - clean) * step_us  # compute after the newest clean checkpoint that stays (committed SDCs)
                tot[Tot.rollback_us] += pending - kept
                pending = kept
                step = last
                if corrupted and n_corrupt == 0 and last == clean:  # the SDC was in no checkpoint left: it is gone
                    corrupted, deadline, onset_step, detector, clean = False, NEVER, 0, 0, last
                    if not keep:  # (with corrupt loads the ring keeps the clean checkpoints too)
                        head, cnt = 0, 0
                if stop == shadow_kind and H:  # a disagreement is an SDC detection
                    if g >= hyper_end:
                        tot[Tot.hyper_activations] += 1
                    hyper_end, anchor = g + window, last
                if nsrv:  # every server whose lifetime ended in this step, in index order (servers.py)
                    # the failure noticed (and an in-process restart failed): its replacement needed
                    tau = t1 + stop_det[stop] + (ip_us if ipo == restarts.FAILED else 0)
                    ready, moved = tau, False  # moved: a replacement from beyond the standbys (host selection)
                    if cap:  # the servers back from repair by then: to the standbys (up to W), then the spares
                        n_sb, n_sp, k2 = servers.back_to_pools(rtree, rep, role, akey, atree, n_sb, n_sp, W, ncl,
                                                               tree_p, tau)
                        used += w_srv * k2
                    while srv[tree[1]] <= g:
                        i = tree[1]
                        f_step = srv[i]  # (the step its lifetime ended in: a replayed fault's)
                        tot[Tot.server_failures] += 1
                        used += w_srv
                        # the server blamed: to repair and replaced (without capacity: i, repaired at once); none
                        # when the cause takes no server down or an in-process restart cleared the fault (it stays in
                        # the job, a new lifetime)
                        blm = -1 if cause_stays[stop] or ipo == restarts.SUCCEEDED else i
                        if diagnose and blm >= 0:  # the diagnosis: a scapegoat among the job's other servers
                            dgh, dgl, other = _diagnosis(tot, wdg, dgh, dgl, diag_p, mis_p, n_job)
                            di += 3
                            if other == -1:
                                blm = -1
                            elif other >= 0:
                                blm = servers.nth_job_counted(role, jcnt, n_job, other, tree_p, i)
                        if not cap and blm >= 0 and relapse_p > 0.0:  # repaired at once: does it hold?
                            rph, rpl, u = draws.uniform(wrp, rph, rpl)
                            ri += 1
                            if u <= relapse_p:
                                rel[i] = 1
                                tot[Tot.relapses] += 1
                        if not cap or blm != i:  # i stays in the job: a new lifetime
                            lfh, lfl, srv[i] = servers.new_end(
                                i, g, wlf, lfh, lfl, ints, floats, mult, fixed, rp, rg, wrg, sched, rel)
                            li += 1
                            servers.update(tree, srv, i, tree_p)
                        if not cap or blm < 0:
                            continue
                        # the blamed server to repair from the end of its step (or retired); its replacement: a
                        # standby, a spare, or the first server back from repair (the job waits for it)
                        n_ret, rph, rpl, k2 = _blamed_out(tot, plan, blm, i, g, f_step, t1, srv, tree, tree_p,
                                                          retire_k, blamed, retire_us, ncl, n_ret, n_job, withheld,
                                                          role, jcnt, rr, rp, wrp, rph, rpl, rep, fixed, rtree,
                                                          rel)
                        ri += k2
                        j, rdy, mv, n_sb, n_sp = _replacement(tot, atree, akey, rtree, rep, role, jcnt, ncl, n_sb,
                                                              n_sp, withheld, tau, preempt, tree_p)
                        ready, moved = max(ready, rdy), moved or mv
                        if len(grp):  # (elastic groups) in the group of the server it replaces (perhaps itself)
                            x = grp[blm]
                            grp[blm] = 0
                            grp[j] = x
                        lfh, lfl, srv[j] = servers.new_end(
                            j, g, wlf, lfh, lfl, ints, floats, mult, fixed, rp, rg, wrg, sched, rel)
                        li += 1
                        servers.update(tree, srv, j, tree_p)
                    if gback:  # the dropped groups back with the restart: their servers out, each a new lifetime
                        lfh, lfl, li, k2 = _groups_back(gbk, g, srv, tree, tree_p, role, grp, gs, nsrv, wlf, lfh, lfl,
                                                        li, ints, floats, mult, fixed, rp, rg, wrg, sched, rel)
                        used += w_srv * k2
                    hi += 1
                    hp = srv[tree[1]]
                    if moved and gang:  # re-scheduled as a gang: the warm standbys staffed too
                        ready, n_sb, n_sp, k2 = servers.staff_standbys(role, akey, atree, rep, rtree, stb, n_sb, n_sp,
                                                                       W, withheld, ncl, tree_p, tau, preempt, ready)
                        used += w_srv * k2
                    if moved and host_us:  # the job re-scheduled on new hosts: the scheduler selects them
                        ready += host_us
                    if ready > tau:  # the restart (and a memory tier's load: load_end) waits for the last replacement
                        wait_until = max(t, load_end) + (ready - tau)
                    if gback:  # ... and for the dropped groups' replacements
                        wait_until = max(wait_until, dready)
                continue
            if onset:  # an SDC sets in
                corrupted = True
                tot[Tot.sdc_onsets] += 1
                ty = 0
                if len(sdc_type_cum) > 1:
                    if st_at != si:
                        sth, stl = pcg.seek(wst, si)
                    sth, stl, u = draws.uniform(wst, sth, stl)
                    st_at = si + 1
                    ty = draws.bucket(sdc_type_cum, u)
                tot[o_onset_type + ty] += 1
                onset_step = q
            deadline, detector = dl, det
            if kind == _STEP:
                if val:
                    tot[Tot.validations] += 1
                    tot[Tot.validation_us] += val_us
                if ck and wend:  # the write in flight waited for: durable
                    wend, last, clean, pending, n_corrupt, head, cnt, hw, plast, pclean = _durable(
                        tot, ring, trace, t, wstep, wsdc, wfail, last, clean, pending, n_corrupt, head, cnt,
                        step_us, hw, keep, ckw, plast, M, pclean)
                if mk and twend:  # ... a memory tier's
                    if committed:
                        last, clean, pending, hw, tclean = _tier_durable_sdc(
                            tot, trace, t, twstep, twfail, corrupted and onset_step <= twstep, last, clean, pending,
                            hw, n_corrupt, tclean, step_us, tkw)
                    else:
                        last, clean, pending, hw = _tier_durable(tot, twstep, twfail, last, clean, pending, hw,
                                                                 step_us, tkw)
                    twend = 0
                    if rk and not twfail:
                        th, tc = late.ring_add(tring, th, tc, twstep)
                if lk and lwend:  # ... the local tier's
                    last, clean, pending, hw, lh, lc = _low_durable(
                        tot, trace, t, lwstep, lwfail, committed and corrupted and onset_step <= lwstep, last, clean,
                        pending, hw, n_corrupt, step_us, lkw, lring, lh, lc)
                    lwend = 0
                fails = False
                if ck and p_fail != 0.0:  # whether this save fails: a draw of "save-fail" per save
                    fh, fl = pcg.seek(wsf, sfi)
                    fh, fl, u = draws.uniform(wsf, fh, fl)
                    sfi += 1
                    fails = u <= p_fail
                if ck and write_us:  # asynchronous: the snapshot taken, its write starts
                    tot[Tot.checkpoint_us] += ckpt_us
                    wend, wstep, wsdc, wfail = t - endw + write_us, q, corrupted, fails
                elif ck and fails:  # failed: it cost its blocking, the job goes on without it
                    tot[Tot.checkpoint_us] += ckpt_us
                    tot[Tot.saves_failed] += 1
                elif ck:
                    tot[Tot.checkpoints] += 1
                    tot[Tot.checkpoint_us] += ckpt_us
                    if not corrupted:
                        if hw:  # steps committed before a fallback: recomputed, not productive again
                            pending, hw = _commit(tot, q, last, hw, pending, step_us)
                        else:
                            tot[Tot.steps_committed] += q - last
                            tot[Tot.productive_us] += pending
                            pending = 0
                        last = clean = q
                        if M:
                            plast = pclean = q
                        if keep:
                            head, cnt = late.ring_add(ring, head, cnt, q)
                    else:
                        _baked_in(tot, trace, t, n_corrupt, last, clean)  # committed SDCs: it takes the SDC with it
                        n_corrupt += 1
                        head, cnt = late.ring_add(ring, head, cnt, q)
                        last = q
                        if M:
                            plast = q
                elif mk and tw_us:  # a memory tier's save with a write: a rollback target once written (unless it
                    # fails: its write ends without a copy)
                    tot[Tot.checkpoint_us] += mem_us
                    twend, twstep, twfail = t - endw + tw_us, q, mkf
                elif mk and mkf:  # a memory tier's save that failed: paid, the tier's copy before it stays
                    tot[Tot.tier_saves_failed] += 1
                    tot[Tot.checkpoint_us] += mem_us
                elif mk:  # a memory tier's save: a rollback target, the steps before it committed
                    tot[Tot.tier_saves] += 1
                    tot[Tot.checkpoint_us] += mem_us
                    if corrupted:  # committed SDCs: it takes the SDC, overwriting the tier's clean copy (with one)
                        _baked_in(tot, trace, t, n_corrupt, last, clean)
                        last, tclean = q, 0
                    else:
                        pending, hw = _commit(tot, q, last, hw, pending, step_us)
                        last = clean = tclean = q
                    if rk:  # the newest of its copies
                        th, tc = late.ring_add(tring, th, tc, q)
                elif lk and lw_us:  # the local tier's save with a write (two tiers), as the tier's above
                    tot[Tot.checkpoint_us] += low_us
                    lwend, lwstep, lwfail = t - endw + lw_us, q, lkf
                elif lk and lkf:
                    tot[Tot.tier_saves_failed] += 1
                    tot[Tot.low_saves_failed] += 1
                    tot[Tot.checkpoint_us] += low_us
                elif lk:  # the local tier's save (two tiers), as the tier's above
                    tot[Tot.tier_saves] += 1
                    tot[Tot.low_saves] += 1
                    tot[Tot.checkpoint_us] += low_us
                    if corrupted:  # committed SDCs: it takes the SDC
                        _baked_in(tot, trace, t, n_corrupt, last, clean)
                        last = q
                    else:
                        pending, hw = _commit(tot, q, last, hw, pending, step_us)
                        last = clean = q
                    lh, lc = late.ring_add(lring, lh, lc, q)
                if q == target:  # the job's end
                    if twend:  # a memory tier's write in flight dropped: the job needs no copy after it ends
                        tot[Tot.tier_saves_aborted] += 1
                        twend = 0
                    lwend = _low_abort(tot, lwend)
                    if wend:  # the write in flight waited for
                        wend, last, clean, pending, n_corrupt, head, cnt, hw, plast, pclean = _durable(
                            tot, ring, trace, t, wstep, wsdc, wfail, last, clean, pending, n_corrupt, head, cnt,
                            step_us, hw, keep, endw, plast, M, pclean)
                    if corrupted and (n_corrupt or last > clean):  # in a checkpoint: void since the clean one
                        tot[Tot.steps_recomputed] += step - clean
                        tot[Tot.rollback_us] += pending
                        # (steps a recovery went below after they were committed, State.hw, counted productive
                        # once: void with their redo, their credit taken back: Totals.voided_us)
                        tot[Tot.voided_us] += max(hw - clean, 0) * step_us
                        step = last = clean
                        pending = 0
                        corrupted = False
                    if corrupted:  # an SDC in no checkpoint yet: baked in, its steps void (seed 000's end-of-job rule)
                        tot[Tot.sdc_baked] += 1
                        record(trace, t, tr.SDC_BAKED, tr.NONE)
                        tot[Tot.steps_recomputed] += step - last
                        tot[Tot.rollback_us] += pending
                        tot[Tot.voided_us] += max(hw - last, 0) * step_us
                    elif hw:
                        pending, hw = _commit(tot, step, last, hw, pending, step_us)
                    else:
                        tot[Tot.steps_committed] += step - last
                        tot[Tot.productive_us] += pending
                    tot[Tot.jobs_completed] += 1
                    if down:  # the next job starts with every group (with servers, once their replacements are)
                        for j in range(E):
                            if el_srv and rj[j]:
                                gbk[j] = 1
                                wait_until = max(wait_until, grd[j])
                                grd[j] = 0
                            rj[j] = 0
                        down, rmin = 0, NEVER
                        if el_srv:
                            lfh, lfl, li, k2 = _groups_back(gbk, g, srv, tree, tree_p, role, grp, gs, nsrv, wlf, lfh,
                                                            lfl, li, ints, floats, mult, fixed, rp, rg, wrg, sched, rel)
                            used += w_srv * k2
                            hp = srv[tree[1]]
                    # element by element: a slice assignment compiles numba's shape-mismatch error path (kernels.py)
                    for k2 in range(len(tot)):
                        start[k2] = tot[k2]
                    job_t, job_g = t, g
                    slow_limit = job_g + slow_steps if slow_steps < NEVER else NEVER
                    step = last = clean = pending = plast = pclean = tclean = th = tc = lh = lc = 0
                    corrupted, deadline, onset_step, detector, n_corrupt, head, cnt, hw = False, NEVER, 0, 0, 0, 0, 0, 0
                    if hyper_end > g:  # a job's end closes the hyper window
                        hyper_end = g
                continue
            if kind == _FOUND:
                tot[o_finds + detector] += 1
                from_tier = False  # (a memory tier beside committed SDCs) recovered from the tier's copy
                tot[Tot.tier_loads_corrupt] += tb  # a memory tier's copies loaded first and found corrupt: dropped
                tot[Tot.low_loads_corrupt] += tbl
                cri = cri_c  # (every load's draw made, the one that loaded included)
                if mem_bad:
                    tclean = 0
                if n_corrupt == 0 and last == clean:
                    tot[Tot.sdc_detected] += 1
                    record(trace, t, tr.SDC_DETECTED, detector)
                    if keep and (mem_bad or not mem_t):  # back to the newest persistent checkpoint that loads
                        last, clean, cnt, hw, cri = _fell_back(tot, back_c, bad_c, cri_c, last, cnt, hw)
                        mem_bad = False
                    back = tgo if tgo else plast if mem_bad else last
                    from_tier = M != 0 and back > plast
                else:  # found late: back to the newest retained checkpoint older than the onset (late.py)
                    tot[Tot.sdc_late_found] += 1
                    if M and tgo:  # the tier's newest clean copy that loads, still there
                        back, from_tier = tgo, True
                        tot[Tot.checkpoints_lost] += n_corrupt
                        record(trace, t, tr.SDC_LATE_FOUND, detector)
                        if keep:  # (the kept persistent checkpoints above it hold the SDC: discarded)
                            cnt = _tier_drop(ring, head, cnt, back)
                    elif keep:  # with corrupt loads: where _late_fallback's chain went (the ring's own rule)
                        back = back_c
                        tot[Tot.loads_corrupt] += bad_c
                        if back == 0 and bad_c:
                            tot[Tot.fallbacks_to_start] += 1
                        if _start_kept(filled, cnt, retention) or ring[head] < onset_step:  # a clean one kept
                            tot[Tot.checkpoints_lost] += n_corrupt
                            record(trace, t, tr.SDC_LATE_FOUND, detector)
                            cnt = _tier_drop(ring, head, cnt, back)  # (those above it: corrupt, or holding the SDC)
                        else:  # unrecoverable: on from the oldest kept checkpoint that loads, the SDC accepted
                            tot[Tot.checkpoints_lost] += max(cnt - bad_c - 1, 0)
                            tot[Tot.sdc_unrecoverable] += 1
                            record(trace, t, tr.SDC_UNRECOVERABLE, detector)
                            if back:  # its steps committed (those committed once already, State.hw, recomputed)
                                tot[Tot.steps_recomputed] += step - back
                                tot[Tot.rollback_us] += pending - (back - clean) * step_us
                                pending, hw = _commit(tot, back, clean, hw, (back - clean) * step_us, step_us)
                                step = clean = back
                                pending = 0
                            # the ring: the one it went on from (those below it found corrupt, those above lost)
                            head, cnt = (head + bad_c) % len(ring), 1 if back else 0
                        if back < clean:  # (found corrupt, or the job's start) below the work committed
                            hw = max(hw, clean)
                    elif n_corrupt < retention:
                        back = pclean if M else clean
                        tot[Tot.checkpoints_lost] += n_corrupt
                        record(trace, t, tr.SDC_LATE_FOUND, detector)
                    else:  # unrecoverable: on from the oldest retained checkpoint, the SDC accepted
                        back = ring[head]
                        tot[Tot.checkpoints_lost] += retention - 1
                        tot[Tot.sdc_unrecoverable] += 1
                        record(trace, t, tr.SDC_UNRECOVERABLE, detector)
                        tot[Tot.steps_recomputed] += step - back
                        tot[Tot.rollback_us] += pending - (back - clean) * step_us
                        # its steps committed (those committed once already, State.hw, recomputed)
                        pending, hw = _commit(tot, back, clean, hw, (back - clean) * step_us, step_us)
                        step = clean = back
                        pending = 0
                if M:  # the checkpoints holding the SDC discarded; work committed above ``back`` recomputed later
                    if back < clean:
                        hw = max(hw, clean)
                    if from_tier:
                        tot[Tot.recoveries_tier] += 1
                        if fl:
                            tot[Tot.low_recoveries] += 1
                        plast = pclean
                    else:
                        plast = pclean = back
                        tclean = 0
                        if back > 0:
                            tot[Tot.recoveries_persistent] += 1
                        else:
                            tot[Tot.recoveries_start] += 1
            else:
                if val:
                    tot[Tot.validations] += 1
                    tot[Tot.validation_us] += val_us
                if kind == _BAKED:
                    if ck and wend:  # the write in flight waited for (durable), then the checkpoint that bakes it in
                        wend, last, clean, pending, n_corrupt, head, cnt, hw, plast, pclean = _durable(
                            tot, ring, trace, t, wstep, wsdc, wfail, last, clean, pending, n_corrupt, head, cnt,
                            step_us, hw, keep, ckw, plast, M, pclean)
                    if mk and twend:  # ... a memory tier's
                        last, clean, pending, hw = _tier_durable(tot, twstep, twfail, last, clean, pending, hw,
                                                                 step_us, tkw)  # (reference semantics)
                        twend = 0
                        if rk and not twfail:
                            th, tc = late.ring_add(tring, th, tc, twstep)
                    if lk and lwend:  # ... the local tier's (reference semantics)
                        last, clean, pending, hw, lh, lc = _low_durable(tot, trace, t, lwstep, lwfail, False, last,
                                                                        clean, pending, hw, n_corrupt, step_us, lkw,
                                                                        lring, lh, lc)
                        lwend = 0
                    tot[Tot.checkpoint_us] += low_us if lk else mem_us if mk else ckpt_us
                    tot[Tot.sdc_baked] += 1
                    record(trace, t, tr.SDC_BAKED, tr.NONE)
                else:
                    tot[Tot.sdc_detected] += 1
                    record(trace, t, tr.SDC_DETECTED, tr.NONE)
                if M and cri_c != cri:  # the memory tier's checkpoint loaded: its draw made
                    cri = cri_c
                tot[Tot.tier_loads_corrupt] += tb  # (its copies found corrupt: dropped)
                tot[Tot.low_loads_corrupt] += tbl
                if mem_bad:  # ... every one: on to the persistent one
                    tclean = 0
                    if not keep:
                        back_c, bad_c = plast, 0
                if mem_t and tgo and tgo < last:  # a copy below newer ones found corrupt: below the work committed
                    hw = max(hw, last)
                    last = clean = tgo
                if (keep or mem_bad) and not mem_t:  # back to the newest checkpoint that loads (corrupt ones dropped)
                    last, clean, cnt, hw, cri = _fell_back(tot, back_c, bad_c, cri_c, last, cnt, hw)
                back = last
                if M:  # recovered from the memory tier, or from the persistent checkpoint (the newest then)
                    if mem_t:
                        tot[Tot.recoveries_tier] += 1
                        if fl:
                            tot[Tot.low_recoveries] += 1
                    else:
                        plast = pclean = back
                        if back > 0:
                            tot[Tot.recoveries_persistent] += 1
                        else:
                            tot[Tot.recoveries_start] += 1
            # an SDC found: restart from ``back`` (the newest clean checkpoint), open a hyper window (hyper.py); the
            # rollback aborts the write in flight
            if wend:
                tot[Tot.saves_aborted] += 1
                wend = 0
            if twend:
                tot[Tot.tier_saves_aborted] += 1
                twend = 0
            lwend = _low_abort(tot, lwend)
            if rk:  # the tier's copies above ``back``: found corrupt, holding the SDC, or above a fallback
                tc = _tier_drop(tring, th, tc, back)
            if L:
                lc = _tier_drop(lring, lh, lc, back)
            tot[Tot.restart_us] += restart + ld
            tot[Tot.load_us] += ld
            tot[Tot.steps_recomputed] += step - back
            tot[Tot.rollback_us] += pending
            pending = 0
            step = last = clean = back
            corrupted, deadline, onset_step, detector, n_corrupt = False, NEVER, 0, 0, 0
            if not keep:  # (with corrupt loads the ring keeps the clean checkpoints too)
                head, cnt = 0, 0
            if H:
                if g >= hyper_end:
                    tot[Tot.hyper_activations] += 1
                hyper_end, anchor = g + window, back

        # to_state(): each stream's next element after g
        if nsrv:
            pos[Pos.lifetimes], pos[Pos.repair_draws], pos[Pos.wait_until] = li, ri, wait_until
            pos[Pos.diagnosis_draws] = di
            if burst_log1m != 0.0:
                bh, bl, bi, bp = draws.past(wb, bh, bl, bi, bp, g, burst_log1m)
            pos[Pos.burst_draws], pos[Pos.burst_at], pos[Pos.burst_picks] = bi, bp, pk
        elif hard_log1m != 0.0:
            hh, hl, hi, hp = draws.past(wh, hh, hl, hi, hp, g, hard_log1m)
        if sdc_log1m != 0.0:
            sh, sl, si, sp = draws.past(ws, sh, sl, si, sp, g, sdc_log1m)
        if need == 0:
            pos[Pos.clock] = clock
        pos[Pos.t], pos[Pos.g], pos[Pos.step], pos[Pos.last_ckpt] = t, g, step, last
        pos[Pos.corrupted], pos[Pos.pending_us] = 1 if corrupted else 0, pending
        pos[Pos.job_start_t], pos[Pos.job_start_g] = job_t, job_g
        pos[Pos.hyper_end], pos[Pos.hyper_anchor], pos[Pos.n_corrupt] = hyper_end, anchor, n_corrupt
        # kept under committed SDCs only (the State keeps them at 0 otherwise)
        pos[Pos.clean_ckpt], pos[Pos.sdc_onset] = (clean, onset_step) if committed else (0, 0)
        pos[Pos.sdc_deadline], pos[Pos.sdc_detector] = deadline, detector
        pos[Pos.hard_i], pos[Pos.hard_p], pos[Pos.sdc_i], pos[Pos.sdc_p] = hi, hp, si, sp
        pos[Pos.ring_head], pos[Pos.ring_n] = head, cnt
        pos[Pos.ring_filled] = 1 if keep and _filled(filled, cnt, retention, step) else 0
        pos[Pos.write_end], pos[Pos.write_step], pos[Pos.write_sdc] = wend, wstep, 1 if wsdc else 0
        pos[Pos.tier_write_end], pos[Pos.tier_write_step], pos[Pos.tier_write_fails] = twend, twstep, \
            1 if twfail else 0
        pos[Pos.write_fails], pos[Pos.save_draws] = 1 if wfail else 0, sfi
        pos[Pos.corrupt_draws], pos[Pos.hw] = cri, hw
        pos[Pos.persist_last], pos[Pos.load_end] = plast, load_end
        # (a tier copy no newer than the clean persistent one is never gone back to: 0, whatever cut of time)
        pos[Pos.persist_clean], pos[Pos.tier_clean] = (pclean, tclean if tclean > pclean else 0) if committed and M \
            else (0, 0)
        pos[Pos.jit_end] = jit_end
        pos[Pos.tier_head], pos[Pos.tier_n] = th, tc
        pos[Pos.low_head], pos[Pos.low_n] = lh, lc
        pos[Pos.low_write_end], pos[Pos.low_write_step], pos[Pos.low_write_fails] = lwend, lwstep, 1 if lwfail else 0
        work[r] = used
    return need


@njit()
def _groups_back(back, g, srv, tree, p, role, grp, gs, nsrv, w, hi, lo, li, ints, floats, mult, fixed, rp, rg, wrg,
                 sched, rel):
    """Elastic groups with servers: every group flagged in ``back`` (cleared) back in the job after executed step
    ``g``, its servers out each a new lifetime (servers.group_back). Returns (hi, lo, li, the servers visited)."""
    k = 0
    for j in range(len(back)):
        if back[j]:
            back[j] = 0
            hi, lo, n, m = servers.group_back(j, g, srv, tree, p, role, grp, gs, nsrv, w, hi, lo, ints, floats, mult,
                                              fixed, rp, rg, wrg, sched, rel)
            li += n
            k += m
    return hi, lo, li, k


@njit()
def _durable(tot, ring, trace, t, wstep, wsdc, wfail, last, clean, pending, n_corrupt, head, cnt, step_us, hw,
             keep, wait, plast, tier, pclean):
    """The save in flight (of job step ``wstep``) written, after the job waited ``wait`` us for it (checkpoint
    time): a rollback target, counted, its steps committed (kept in the ring with ``keep``: corrupt loads); one
    holding the present SDC (``wsdc``, committed SDCs) committed with it (the ring); one that fails (``wfail``)
    counted and nothing else. With a memory ``tier`` it is the newest persistent checkpoint (``plast``), and a
    memory checkpoint saved while it wrote may be newer (its steps committed already; beside committed SDCs one
    holding the SDC: the steps up to this one committed now). ``pclean``: the newest clean persistent checkpoint
    (committed SDCs beside a tier). Returns (0: no write in flight, last, clean, pending, n_corrupt, head, cnt, hw,
    plast, pclean)."""
    tot[Tot.checkpoint_us] += wait
    tot[Tot.checkpoint_wait_us] += wait
    if wfail:
        tot[Tot.saves_failed] += 1
        return 0, last, clean, pending, n_corrupt, head, cnt, hw, plast, pclean
    tot[Tot.checkpoints] += 1
    if wsdc:
        _baked_in(tot, trace, t, n_corrupt, last, clean)  # the SDC in no checkpoint of either tier yet
        head, cnt = late.ring_add(ring, head, cnt, wstep)
        if tier:
            return 0, max(last, wstep), clean, pending, n_corrupt + 1, head, cnt, hw, wstep, pclean
        return 0, wstep, clean, pending, n_corrupt + 1, head, cnt, hw, plast, pclean
    if keep:
        head, cnt = late.ring_add(ring, head, cnt, wstep)
    if tier:
        plast = wstep
        if wstep <= last:
            if wstep > clean:  # (committed SDCs: the newer memory checkpoint holds the SDC)
                pending, hw = _commit(tot, wstep, clean, hw, pending, step_us)
                clean = wstep
            return 0, last, clean, pending, n_corrupt, head, cnt, hw, plast, wstep
    pending, hw = _commit(tot, wstep, last, hw, pending, step_us)
    return 0, wstep, wstep, pending, n_corrupt, head, cnt, hw, plast, wstep


@njit()
def _baked_in(tot, trace, t, n_corrupt, last, clean):
    """Committed SDCs: a checkpoint (of any level) takes the present SDC: baked in, counted once, if it is the first
    to hold it (``n_corrupt`` 0, and ``last``, the newest checkpoint, the clean one)."""
    if n_corrupt == 0 and last == clean:
        tot[Tot.sdc_baked] += 1
        record(trace, t, tr.SDC_BAKED, tr.NONE)


@njit()
def _tier_durable(tot, twstep, twfail, last, clean, pending, hw, step_us, wait):
    """A memory tier's save in flight (of job step ``twstep``) written, after the job waited ``wait`` us for it
    (checkpoint time): counted, and the tier's copy, a rollback target with its steps committed, unless a persistent
    checkpoint made since is newer (reference semantics; committed SDCs: ``_tier_durable_sdc``); one that fails
    (``twfail``) counted and nothing else. Returns (last, clean, pending, hw)."""
    tot[Tot.checkpoint_us] += wait
    tot[Tot.checkpoint_wait_us] += wait
    if twfail:
        tot[Tot.tier_saves_failed] += 1
        return last, clean, pending, hw
    tot[Tot.tier_saves] += 1
    if twstep > last:
        pending, hw = _commit(tot, twstep, last, hw, pending, step_us)
        last = clean = twstep
    return last, clean, pending, hw


@njit()
def _tier_durable_sdc(tot, trace, t, twstep, twfail, holds, last, clean, pending, hw, n_corrupt, tclean, step_us,
                      wait):
    """``_tier_durable`` beside committed SDCs (either tier): a save whose snapshot held the present SDC (``holds``)
    commits it with the copy (baked in if no checkpoint held it yet: ``n_corrupt`` 0 and ``last`` the clean one), its
    steps not committed, the tier's clean copy overwritten (with one copy kept); a clean one is the tier's clean copy,
    and the newest clean checkpoint even below a newer one that holds the SDC; one that fails leaves ``tclean``, the
    tier's clean copy (State.tier_clean), as it was. Returns (last, clean, pending, hw, tclean: 0 when overwritten)."""
    if twfail or not holds:
        if not twfail and twstep <= last and twstep > clean:  # (a newer checkpoint holds the SDC)
            pending, hw = _commit(tot, twstep, clean, hw, pending, step_us)
            clean = twstep
        last, clean, pending, hw = _tier_durable(tot, twstep, twfail, last, clean, pending, hw, step_us, wait)
        return last, clean, pending, hw, tclean if twfail else twstep
    tot[Tot.checkpoint_us] += wait
    tot[Tot.checkpoint_wait_us] += wait
    tot[Tot.tier_saves] += 1
    _baked_in(tot, trace, t, n_corrupt, last, clean)
    return max(last, twstep), clean, pending, hw, 0


@njit()
def _low_durable(tot, trace, t, lwstep, lwfail, holds, last, clean, pending, hw, n_corrupt, step_us, wait, lring, lh,
                 lc):
    """Two tiers: the local tier's save in flight written (``_tier_durable``, or beside committed SDCs
    ``_tier_durable_sdc`` with ``holds``: its snapshot held the present SDC; counted as the local tier's too), the
    newest of its copies unless it fails. Returns (last, clean, pending, hw, lh, lc)."""
    last, clean, pending, hw, _ = _tier_durable_sdc(tot, trace, t, lwstep, lwfail, holds, last, clean, pending, hw,
                                                    n_corrupt, 0, step_us, wait)  # (its clean copy: the ring's)
    if lwfail:
        tot[Tot.low_saves_failed] += 1
    else:
        tot[Tot.low_saves] += 1
        lh, lc = late.ring_add(lring, lh, lc, lwstep)
    return last, clean, pending, hw, lh, lc


@njit()
def _low_abort(tot, lwend):
    """Two tiers: the local tier's write in flight (``lwend`` > 0) aborted by a rollback or dropped at the job's end,
    counted. Returns 0."""
    if lwend:
        tot[Tot.tier_saves_aborted] += 1
        tot[Tot.low_saves_aborted] += 1
    return 0


@njit()
def _newest(ring, head, cnt):
    """The newest job step of a ring of copies (``cnt`` of them, oldest first from ``head``): 0 if none."""
    return ring[(head + cnt - 1) % len(ring)] if cnt else 0


@njit()
def _two_chain(tring, th, tc, ptop, lring, lh, lc, ltop, above, below, w, index, pm, pl):
    """Two tiers: a recovery's loads (``_tier_chain``'s), the local tier's copies newer than the peer tier's newest
    (``ptop`` > 0: a peer write durable in this very unit, the newest) and than ``above`` first, then the peer tier's
    newer than ``above`` (``ltop``: the local tier's durable write in this unit); with ``below`` (a committed SDC's
    late find: its onset step) only the copies older than it, the local ones newer than the peer tier's newest such.
    Returns (the step of the copy that loads, 0: none; whether it is the local tier's; the peer copies loaded; the
    local copies loaded; the local copies found corrupt; the draws made by then)."""
    pn = ptop if ptop > 0 else _newest(tring, th, tc)
    if pn >= below:  # (the peer tier's newest copy older than ``below``)
        pn, k = 0, len(tring)
        for i in range(tc):
            x = tring[(th + tc - 1 - i) % k]
            if x < below:
                pn = x
                break
    x, nll, index = _tier_chain(lring, lh, lc, ltop, max(above, pn), below, w, index, pl)
    if x:
        return x, True, 0, nll, nll - 1, index
    x, nl, index = _tier_chain(tring, th, tc, ptop, above, below, w, index, pm)
    return x, False, nl, nll, nll, index


@njit()
def _commit(tot, c, last, hw, pending, step_us):
    """Steps last+1 .. c committed: productive, but those at or below ``hw`` (committed once already, before a
    fallback below them: State.hw) recomputed, so each job step is productive once. Returns (pending, hw: 0 once
    c reaches it)."""
    dup = max(0, min(c, hw) - last)
    tot[Tot.steps_committed] += c - last - dup
    tot[Tot.productive_us] += (c - last - dup) * step_us
    tot[Tot.rollback_us] += dup * step_us
    return pending - (c - last) * step_us, 0 if c >= hw else hw


@njit()
def _fallback(ring, head, cnt, top, w, index, p):
    """With corrupt loads: the checkpoint a recovery loads, newest first: ``top`` (a save durable in this very
    unit, the ring's newest once there; -1: none), then the ring's (the checkpoints kept, oldest first from
    ``head``); each load one draw of the "corrupt" stream from draw ``index``, corrupt when it is <= ``p``.
    Returns (the job step recovered to, 0 when every one was corrupt: the job's start; the loads; those found
    corrupt; the draws made by then)."""
    k = len(ring)
    extra = 1 if top >= 0 else 0
    m = cnt if top < 0 else min(cnt, k - 1)  # the ring's entries left once ``top`` joins it
    if m + extra == 0:
        return 0, 0, 0, index
    sh, sl = pcg.seek(w, index)
    for i in range(m + extra):
        x = top if i < extra else ring[(head + cnt - 1 - (i - extra)) % k]
        sh, sl, u = draws.uniform(w, sh, sl)
        if u > p:
            return x, i + 1, i, index + i + 1
    return 0, m + extra, m + extra, index + m + extra


@njit()
def _fell_back_sdc(tot, back, bad, index, last, clean, cnt, hw, committed, corrupted, onset, n_corrupt):
    """``_fell_back`` under either semantics: beside a committed SDC (``corrupted``) the checkpoint recovered to holds
    it when its step is at least ``onset`` (the SDC stays, those dropped above it that held it gone from
    ``n_corrupt``, the newest clean checkpoint still ``clean``), else the SDC is gone with them; the work committed
    is up to the newest clean checkpoint. Returns (last, clean, cnt, hw, index, n_corrupt)."""
    if not committed:
        last, clean, cnt, hw, index = _fell_back(tot, back, bad, index, last, cnt, hw)
        return last, clean, cnt, hw, index, n_corrupt
    last, c, cnt, hw, index = _fell_back(tot, back, bad, index, clean, cnt, hw)
    if corrupted and back >= onset:
        return last, clean, cnt, hw, index, n_corrupt - bad
    return last, c, cnt, hw, index, 0


@njit()
def _filled(filled, cnt, retention, step):
    """With corrupt loads, State.ring_filled brought up to date at job step ``step`` with ``cnt`` kept: the ring of
    kept checkpoints holds ``retention`` now or held them since the job was last at step 0 (where it is empty)."""
    return cnt == retention or (filled and step != 0)


@njit()
def _start_kept(filled, cnt, retention):
    """Whether the job's start counts as a kept clean checkpoint (a late find may go back to it), besides the ring's
    (docs/model.md, "Checkpoints kept and found corrupt"), until the ring first held ``retention`` checkpoints
    (``filled``, or ``cnt`` now) since the job was last at step 0; a checkpoint found corrupt and dropped since does
    not bring it back. With none kept (a late find back to a memory tier's copy dropped those above it) the start is
    all there is."""
    return cnt == 0 or (cnt < retention and not filled)


@njit()
def _late_fallback(ring, head, cnt, onset, retention, w, index, p, filled):
    """Committed SDCs with corrupt loads, a late find: the ring's checkpoints (``cnt`` of the newest ``retention``,
    oldest first from ``head``; those of a step >= ``onset`` hold the SDC) it loads in turn, each one draw of the
    "corrupt" stream from draw ``index``, corrupt when it is <= ``p``: while a clean one is kept (the job's start
    counting as one: _start_kept), those older than ``onset``, newest first; else (unrecoverable) every one, oldest
    first; none left: the job's start. Returns (the job step recovered to, 0: the start; the loads; those found
    corrupt; the draws made by then)."""
    k = len(ring)
    loads = 0
    sh, sl = pcg.seek(w, index)
    if _start_kept(filled, cnt, retention) or ring[head] < onset:
        for i in range(cnt - 1, -1, -1):
            x = ring[(head + i) % k]
            if x >= onset:  # (holding the SDC: discarded, not loaded)
                continue
            loads += 1
            sh, sl, u = draws.uniform(w, sh, sl)
            if u > p:
                return x, loads, loads - 1, index + loads
        return 0, loads, loads, index + loads
    for i in range(cnt):
        x = ring[(head + i) % k]
        loads += 1
        sh, sl, u = draws.uniform(w, sh, sl)
        if u > p:
            return x, loads, loads - 1, index + loads
    return 0, loads, loads, index + loads


@njit()
def _diagnosis(tot, w, sh, sl, p_identified, p_wrong, among):
    """A failing server's diagnosis, three draws of "diagnosis" from generator state (sh, sl): identified? pinned on
    another of the ``among`` servers it could be mistaken for (its own included)? which other (servers.py). Counts a
    miss and a wrong pin. Returns (sh, sl, -1: missed; -2: the failing server identified; else the other's rank
    among the others, 0 .. among - 2)."""
    sh, sl, u = draws.uniform(w, sh, sl)
    sh, sl, u2 = draws.uniform(w, sh, sl)
    sh, sl, u3 = draws.uniform(w, sh, sl)
    if u > p_identified:
        tot[Tot.diagnosis_missed] += 1
        return sh, sl, -1
    if u2 <= p_wrong and among > 1:
        tot[Tot.diagnosis_wrong] += 1
        return sh, sl, min(int(u3 * (among - 1)), among - 2)
    return sh, sl, -2


@njit()
def _blamed_out(tot, plan, blm, i, g, f_step, t1, srv, tree, tree_p, retire_k, blamed, retire_us, ncl, n_ret, n_job,
                withheld, role, jcnt, rr, rp, w, sh, sl, rep, fixed, rtree, rel):
    """The server blamed for failing server ``i``'s fault (``blm``: i itself, or a scapegoat) out of the job at the
    end of step ``g`` (t1): retired when the lemon policy blames it again and the cluster would still hold the job
    and the withheld spares, else to repair (_repair; a replayed log's own repair time for i's fault, ``f_step``).
    Returns (the servers retired, the repair stream's state, its draws made)."""
    ints = plan[0]
    if blm != i and srv[blm] <= g:  # the scapegoat's own lifetime ended in this step too
        tot[Tot.server_failures] += 1
    srv[blm] = NEVER  # (in repair, as a pool's server)
    servers.update(tree, srv, blm, tree_p)
    if retire_k and servers.blame(blamed, blm, retire_k, t1, retire_us) and ncl - n_ret > n_job + withheld:
        role[blm] = servers.RETIRED
        servers.set_job(jcnt, blm, 0, tree_p)
        tot[Tot.retirements] += 1
        tot[Tot.retired_at_s] += t1 // 1000000
        return n_ret + 1, sh, sl, 0
    d_log = -1.0  # the log's own repair time, the draws kept (servers.py)
    if len(rr) and blm == i:
        d_log = servers.replayed_repair_us(rp, rr, ints[PI.replay_servers], ints[PI.replay_period],
                                           ints[PI.replay_copies], i, f_step)
    sh, sl = _repair(tot, plan, w, sh, sl, blm, t1, d_log, role, rep, fixed, jcnt, rtree, tree_p, rel)
    return n_ret, sh, sl, 5 if len(rel) else 4


@njit()
def _replacement(tot, atree, akey, rtree, rep, role, jcnt, ncl, n_sb, n_sp, withheld, tau, preempt, tree_p):
    """A blamed server's replacement, noticed at ``tau``: a warm standby (ready at once), else a spare the job may
    take (after its preemption), else the first server back from repair (when it is back); out of the pools, into
    the job. Returns (the server, when it is ready, whether it came from beyond the standbys (host selection), the
    standbys and spares left)."""
    j = atree[1]
    rdy, moved = tau, False
    if akey[j] < ncl:
        tot[Tot.replacements_standby] += 1
        n_sb -= 1
    elif akey[j] < NEVER and n_sp > withheld:  # a spare the job may take
        tot[Tot.replacements_spare] += 1
        n_sp -= 1
        rdy, moved = tau + preempt, True
    else:
        j = rtree[1]
        tot[Tot.replacements_waited] += 1
        rdy, moved = max(tau, rep[j]), True
        rep[j] = NEVER
        servers.update(rtree, rep, j, tree_p)
    if akey[j] < NEVER:  # out of the pools
        akey[j] = NEVER
        servers.update(atree, akey, j, tree_p)
    role[j] = servers.JOB
    servers.set_job(jcnt, j, 1, tree_p)
    return j, rdy, moved, n_sb, n_sp


@njit()
def _repair(tot, plan, w, sh, sl, i, start, logged, role, rep, fixed, jcnt, rtree, p, rel):
    """Server ``i`` to repair from ``start`` (us), its four draws of "repair" from generator state (sh, sl): the
    automatic stage's duration (a mixture's component), the escalation, the manual stage's duration, whether it
    fixes the fault (servers.py); with relapses (``rel`` not empty) a fifth, whether it holds (else ``rel[i]``: its
    next lifetime short); ``logged`` >= 0: the log's own repair time (us) for the whole repair, the draws
    made all the same (servers.replay.repairs: log). Counts it, marks a lemon a true repair fixed, and sets its role,
    its repair's end and the trees. Returns (sh, sl)."""
    ints, floats, ivec, fvec = plan
    mix_cum = seg(fvec, ints, PI.repair_mix_cum)
    sh, sl, u = draws.uniform(w, sh, sl)
    if len(mix_cum):
        d = late.mixture_us(mix_cum, seg(ivec, ints, PI.repair_mix_kind), seg(fvec, ints, PI.repair_mix_scale_us),
                            seg(fvec, ints, PI.repair_mix_sigma), u)
    else:
        d = late.latency_us(ints[PI.repair_kind], floats[PF.repair_scale_us], floats[PF.repair_sigma], u)
    sh, sl, u = draws.uniform(w, sh, sl)
    manual = u <= floats[PF.manual_probability]
    sh, sl, u = draws.uniform(w, sh, sl)
    if logged >= 0.0:
        d, manual = np.int64(np.rint(logged)), False
    if manual:
        d += late.latency_us(ints[PI.manual_kind], floats[PF.manual_scale_us], floats[PF.manual_sigma], u)
        tot[Tot.repairs_manual] += 1
    sh, sl, u = draws.uniform(w, sh, sl)
    tot[Tot.repairs_started] += 1
    if u <= (floats[PF.repair_fail_manual] if manual else floats[PF.repair_fail_auto]):
        tot[Tot.repairs_false] += 1
        if manual:
            tot[Tot.repairs_false_manual] += 1
    elif fixed[i] == 0 and servers.is_lemon(i, floats[PF.lemon_fraction]):
        fixed[i] = 1
        tot[Tot.lemons_fixed] += 1
    if len(rel):
        sh, sl, u = draws.uniform(w, sh, sl)
        if u <= floats[PF.relapse_p]:
            rel[i] = 1
            tot[Tot.relapses] += 1
    role[i], rep[i] = servers.REPAIR_MANUAL if manual else servers.REPAIR, start + d
    servers.set_job(jcnt, i, 0, p)
    servers.update(rtree, rep, i, p)
    return sh, sl


@njit()
def _tier_saves(w, g0, step, b, M, period, off, p):
    """A memory tier's saves at job steps step + 1 .. b (the multiples of ``M`` off the persistent checkpoint's
    lattice ``period``, ``off``), the one at job step k made at the end of executed step ``g0 + k - step``: each fails
    when that draw of the "tier-save-fail" stream ``w`` is <= ``p``. Returns (how many failed, the newest that did
    not: 0 if none)."""
    nf, ok = 0, 0
    k = (b // M) * M
    while k > step:
        if (k - off) % period != 0:
            sh, sl = pcg.seek(w, g0 + k - step)
            sh, sl, u = draws.uniform(w, sh, sl)
            if u <= p:
                nf += 1
            elif ok == 0:
                ok = k
        k -= M
    return nf, ok


@njit()
def _tier_newest(step, b, M, C):
    """The newest of a memory tier's saves at job steps step + 1 .. b (the multiples of ``M`` off the persistent
    lattice, period ``C`` > M, offset 0: ``tq`` is off under hyper-checkpointing, whose windows move the lattice):
    0 if none."""
    k = (b // M) * M
    if k % C == 0:
        k -= M
    return k if k > step else 0


@njit()
def _tier_chain(tring, th, tc, top, above, below, w, index, p):
    """A recovery's loads of a memory tier's copies, newest first: ``top`` (> 0: a copy ahead of the ring: with one
    copy kept, that copy; else a write durable in this very unit), then the ring's (``tring``, ``tc`` of them oldest
    first from ``th``; once ``top`` joins it, its newest len - 1), those newer than ``above``, the ring's older than
    ``below`` (a late find: without the SDC); each load one draw of the "corrupt" stream from draw ``index``,
    corrupt when it is <= ``p`` (none drawn when ``p`` is 0). Returns (the step of the copy that loads, 0: none; the
    loads; the draws made by then)."""
    k = len(tring)
    n = tc if top <= 0 else max(min(tc, k - 1), 0)
    loads, drawn = 0, False
    sh, sl = np.uint64(0), np.uint64(0)
    for i in range(-1 if top > 0 else 0, n):
        x = top if i < 0 else tring[(th + tc - 1 - i) % k]
        if x <= above:  # (the ring's steps grow from its oldest)
            break
        if i >= 0 and x >= below:
            continue
        loads += 1
        if p != 0.0:
            if not drawn:
                sh, sl = pcg.seek(w, index)
                drawn = True
            sh, sl, u = draws.uniform(w, sh, sl)
            index += 1
            if u <= p:
                continue
        return x, loads, index
    return 0, loads, index


@njit()
def _tier_drop(tring, th, tc, back):
    """A ring of checkpoints (a memory tier's copies, or the kept persistent ones; ``tc`` of them, oldest first from
    ``th``) without those above job step ``back``: its new count."""
    k = len(tring)
    while tc > 0 and tring[(th + tc - 1) % k] > back:
        tc -= 1
    return tc


@njit()
def _fell_back(tot, back, bad, index, last, cnt, hw):
    """A recovery's fallback chain applied: its corrupt checkpoints counted and dropped (the ring's newest),
    the steps committed above its checkpoint remembered (``hw``). Returns (last, clean, cnt, hw, index)."""
    tot[Tot.loads_corrupt] += bad
    if back == 0 and bad:
        tot[Tot.fallbacks_to_start] += 1
    if back < last and hw < last:
        hw = last
    return back, back, max(cnt - bad, 0), hw, index


@njit()
def _tier_lost(tree, srv, p, g, cap, jcnt, copies, jump, stk, count, bases, failed):
    """Whether a memory tier is lost with the servers failing in executed step ``g`` (``srv[i] <= g``: the walk of
    servers.count_le over the tree of the servers' ends): each failed server is at its position among the job's
    servers (index order; with pools its rank in the count tree ``jcnt``), position ``x`` in the group of
    ``(x // (J m)) J m + x % J`` (J ``jump``, m ``copies``: NVIDIA's resiliency extension's clique replication,
    docs/model.md); the tier is lost when every member of some group failed. ``stk``, ``count``, ``bases`` and
    ``failed`` are scratch (``count`` zero on entry and on return)."""
    lost, span = False, jump * copies
    nb = servers.count_le(tree, srv, p, g, stk, failed)
    for j in range(nb):
        i = failed[j]
        x = servers.rank_job(jcnt, i, p) if cap else i
        b = (x // span) * span + x % jump
        count[b] += 1
        bases[j] = b
        if count[b] == copies:
            lost = True
    for j in range(nb):
        count[bases[j]] = 0
    return lost
