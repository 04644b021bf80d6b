"""Servers in the loop (the model: simd.engine.servers): a lifetime's steps from its uniform, and the tournament
tree that keeps the server whose lifetime ends first at its root.

A replica's servers are a region of its ``aux`` row (layout.Aux): ``srv[i]``, the executed step in which server
``i``'s lifetime ends, and ``tree`` (2P entries, P the power of two at least S): leaf ``P + i`` is server ``i``
(-1 past the last server), an inner node the child whose server ends first (the lower index on a tie), so
``tree[1]`` is the next server to fail. Rebuilt from ``srv`` at the start of every call (O(S)); a renewal updates
the path above its leaf (O(log S)).
"""

from __future__ import annotations

import math

import numpy as np

from simd.engine import pcg
from simd.engine.hazard import NEVER
from simd.engine.jit import njit
from simd.engine.kernel import draws
from simd.engine.kernel.draws import GAP_CAP
from simd.engine.kernel.late import inv_cdf
from simd.engine.kernel.plan import PF, PI
from simd.engine.servers import JOB, REPAIR, REPAIR_MANUAL, RETIRED, SPARE, STANDBY  # noqa: F401 (the roles)

# a server of a dropped elastic replica group (docs/model.md): no lifetime runs while the group is out (its end,
# later than any: a replayed server without faults ends at NEVER and is still the job's)
OUT = NEVER + 1
GAMMA_DRAWS = 64  # draws of "server-rate" per server: 31 tries of Marsaglia-Tsang (2 each) and the boost's
MULT_ONE = 4294967296.0  # servers.MULT_ONE: a multiplier of 1 in State.srv_mult's fixed point
# With regimes a lifetime's walk over the regime stretches (operational_steps) ends, as never (GAP_CAP), where it
# passes 2**31 executed steps (68 years of 1 s steps) without the lifetime ending: a small gamma multiplier (a
# fitted frailty of shape ~0.4 draws some below 1e-8) would otherwise walk ~1e11 stretches for one lifetime
REGIME_HORIZON = 1 << 31


@njit()
def is_lemon(i, fraction):
    """servers.is_lemon: lemons spread evenly over the servers."""
    return math.floor((i + 1) * fraction + 0.5) > math.floor(i * fraction + 0.5)


@njit()
def gamma_multiplier(w, i, a):
    """Server ``i``'s rate multiplier, gamma with mean 1 and shape ``a``, from draws GAMMA_DRAWS * i .. of stream
    ``w`` (servers.py: Marsaglia and Tsang, 2000), as servers.MULT_ONE fixed point (at least 1)."""
    sh, sl = pcg.seek(w, GAMMA_DRAWS * i)
    aa = a + 1.0 if a < 1.0 else a
    d = aa - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    x = d  # (31 rejections in a row: probability < 1e-40; the mode then)
    for _ in range(31):
        sh, sl, u1 = draws.uniform(w, sh, sl)
        sh, sl, u2 = draws.uniform(w, sh, sl)
        if u1 >= 1.0:
            continue
        z = inv_cdf(u1)
        v = 1.0 + c * z
        if v <= 0.0:
            continue
        v = v * v * v
        if math.log(u2) < 0.5 * z * z + d - d * v + d * math.log(v):
            x = d * v
            break
    if a < 1.0:
        sh, sl, u = draws.uniform(w, sh, sl)
        x *= u ** (1.0 / a)
    q = x / a * MULT_ONE + 0.5
    return int(q) if 1.0 <= q < 9.2e18 else (1 if q < 1.0 else 9200000000000000000)

@njit()
def lifetime_x(kind, shape, scale, u):
    """A lifetime from uniform ``u`` in (0, 1], continuous steps: ``scale * F(u)`` (``kind`` as servers.LIFETIMES: F is
    ``-log u``, ``(-log u) ** (1 / shape)`` or ``exp(shape * z)`` with z the standard normal quantile of u; inf for
    the normal quantile of 1, an endless lifetime)."""
    if kind == 0:
        return scale * -math.log(u)
    if kind == 1:
        return scale * (-math.log(u)) ** (1.0 / shape)
    if u >= 1.0:
        return math.inf
    return scale * math.exp(shape * inv_cdf(u))


@njit()
def lifetime_steps(kind, shape, scale, u):
    """Steps until a lifetime from uniform ``u`` in (0, 1] ends: ``ceil(lifetime_x)`` clipped to [1, 2**50]."""
    x = lifetime_x(kind, shape, scale, u)
    if not x < GAP_CAP:  # inf or nan (an infinite scale: never fails) included
        return int(GAP_CAP)
    n = int(math.ceil(x))
    return n if n >= 1 else 1


@njit()
def regime_first(rg, w, floats):
    """The regime path's first stretch into the cursor ``rg`` (State.regime) if it has none: draw 0 of stream ``w``
    the regime (stormy when u <= P(stormy)), draw 1 its length (servers.py, "Operational time")."""
    if rg[0] != 0:
        return
    sh, sl = pcg.seek(w, 0)
    sh, sl, u = draws.uniform(w, sh, sl)
    r = 1 if u <= floats[PF.regime_p_stormy] else 0
    sh, sl, u = draws.uniform(w, sh, sl)
    rg[0], rg[1], rg[2], rg[3] = 1, 0, draws.gap_of(u, _log1m(floats, r)), r


@njit()
def _log1m(floats, r):
    return floats[PF.regime_stormy_log1m] if r else floats[PF.regime_calm_log1m]


@njit()
def _next_stretch(w, sh, sl, j1, end, r, floats):
    """The stretch after stretch ``j1 - 1`` (ending at ``end``, regime ``r``): (sh, sl, j1 + 1, its first step - 1,
    its end, its regime), its length from the stream's draw ``j1 + 1`` at (sh, sl)."""
    sh, sl, u = draws.uniform(w, sh, sl)
    r = 1 - r
    return sh, sl, j1 + 1, end, end + draws.gap_of(u, _log1m(floats, r)), r


@njit()
def operational_steps(g, x, rg, w, floats, sched):
    """The executed steps after step ``g`` until ``x`` operational steps have passed (servers.py, "Operational
    time"): the first ``d`` >= 1 with ``tau(g + d) - tau(g) >= x``, clipped to 2**50; with regimes 2**50 (never)
    when the walk passes REGIME_HORIZON steps, or cannot end before it at the most a step adds. ``rg``: the regime
    cursor (State.regime; empty without regimes), moved to the stretch that holds step g + 1; ``w`` the regime stream;
    ``sched`` the schedule's (first step, multiplier) pairs (empty: none)."""
    if not x < GAP_CAP:
        return int(GAP_CAP)
    zero = np.uint64(0)
    sh, sl = zero, zero
    if len(rg):
        regime_first(rg, w, floats)
        if rg[2] <= g:  # the cursor to the stretch of step g + 1 (g only grows: amortized over the replica)
            sh, sl = pcg.seek(w, rg[0] + 1)
            j1, start, end, r = rg[0], rg[1], rg[2], rg[3]
            while end <= g:
                sh, sl, j1, start, end, r = _next_stretch(w, sh, sl, j1, end, r, floats)
            rg[0], rg[1], rg[2], rg[3] = j1, start, end, r
        j1, end, r = rg[0], rg[2], rg[3]
        seeked = False
    else:
        j1, end, r, seeked = 0, np.int64(1) << 62, 0, True
    k = 0  # the schedule's piece of step g + 1: the last with first step <= g
    ns = len(sched) // 2
    while k + 1 < ns and sched[2 * (k + 1)] <= g:
        k += 1
    horizon = GAP_CAP
    if len(rg):  # (REGIME_HORIZON) a lifetime that even at the most a step adds ends beyond it: never, no walk
        horizon = REGIME_HORIZON
        most = max(floats[PF.regime_stormy], floats[PF.regime_calm])
        if ns:
            top = 0.0
            for i in range(k, ns):
                top = max(top, sched[2 * i + 1])
            most *= top
        if not x <= most * REGIME_HORIZON:
            return int(GAP_CAP)
    pos = g
    while True:
        b = end
        if k + 1 < ns and sched[2 * (k + 1)] < b:
            b = np.int64(sched[2 * (k + 1)])
        m = 1.0
        if len(rg):
            m = floats[PF.regime_stormy] if r else floats[PF.regime_calm]
        if ns:
            m *= sched[2 * k + 1]
        n = b - pos
        if m > 0.0:
            if m * n >= x:
                d = math.ceil(x / m)
                d = 1 if d < 1 else n if d > n else d
                return int(pos + d - g)
            x -= m * n
        pos = b
        if pos - g >= horizon:
            return int(GAP_CAP)
        if k + 1 < ns and sched[2 * (k + 1)] <= pos:
            k += 1
        if pos == end:
            if not seeked:
                sh, sl = pcg.seek(w, j1 + 1)
                seeked = True
            sh, sl, j1, _, end, r = _next_stretch(w, sh, sl, j1, end, r, floats)


@njit()
def server_scale(i, scale_n, scale_l, lemon_f, mult, fixed):
    """Server ``i``'s lifetime scale: its class's (a lemon, unless a repair fixed it (``fixed``, empty without pools),
    or not: is_lemon), divided by its gamma multiplier when there are some (``mult`` not empty)."""
    sc = scale_l if is_lemon(i, lemon_f) and (len(fixed) == 0 or fixed[i] == 0) else scale_n
    if len(mult):
        sc *= MULT_ONE / mult[i]
    return sc


@njit()
def lifetime_of(i, u, kind, shape, scale_n, scale_l, lemon_f, mult, fixed):
    """Server ``i``'s lifetime in steps from uniform ``u`` at its scale (server_scale)."""
    return lifetime_steps(kind, shape, server_scale(i, scale_n, scale_l, lemon_f, mult, fixed), u)


@njit()
def _first(srv, a, b):
    """Of two tree entries (server indices, -1 for none), the one whose lifetime ends first."""
    if b < 0:
        return a
    if a < 0:
        return b
    return b if srv[b] < srv[a] else a


@njit()
def build(tree, srv, n, p):
    """The tree over servers 0 .. n - 1 keyed by ``srv`` (module docstring; any key array: the capacity's trees
    key the servers by their repair's end and by their place in the pools)."""
    for i in range(p):
        tree[p + i] = i if i < n else -1
    for j in range(p - 1, 0, -1):
        tree[j] = _first(srv, tree[2 * j], tree[2 * j + 1])


@njit()
def update(tree, srv, i, p):
    """Server ``i``'s end changed: the path from its leaf to the root again."""
    j = (p + i) // 2
    while j >= 1:
        tree[j] = _first(srv, tree[2 * j], tree[2 * j + 1])
        j //= 2


@njit()
def blame(blamed, b, k, t, window):
    """Server ``b`` blamed at simulated time ``t`` (us): its row of the last ``k`` blames (``blamed[b * k ..]``,
    time + 1, 0 for none, oldest first) shifted to take it. Returns whether the server now has ``k`` blames within
    ``window`` us (its retirement is due)."""
    o = b * k
    for x in range(k - 1):
        blamed[o + x] = blamed[o + x + 1]
    blamed[o + k - 1] = t + 1
    return blamed[o] > 0 and t + 1 - blamed[o] <= window


@njit()
def nth_job(role, n, r, skip=-1):
    """The ``r``-th (from 0, in index order) of the job's servers other than ``skip`` (-1: none; a misdiagnosis's
    scapegoat skips the failing server): without pools (``role`` empty) the job is servers 0 .. n - 1, else the
    servers with role JOB; -1 if there are not that many."""
    if len(role) == 0:
        j = r if skip < 0 or r < skip else r + 1
        return j if j < n else -1
    for j in range(len(role)):
        if role[j] == JOB and j != skip:
            if r == 0:
                return j
            r -= 1
    return -1


@njit()
def build_jobs(cnt, role, n, p):
    """The count tree of the job's servers among servers 0 .. n - 1 (``role`` JOB): leaf ``P + i`` is 1 for a job
    server, an inner node the sum of its children, so ``cnt[1]`` is the job's size (O(P))."""
    for i in range(p):
        cnt[p + i] = 1 if i < n and role[i] == JOB else 0
    for j in range(p - 1, 0, -1):
        cnt[j] = cnt[2 * j] + cnt[2 * j + 1]


@njit()
def set_job(cnt, i, v, p):
    """Server ``i`` joins (``v`` 1) or leaves (0) the job: the path from its leaf to the root again (O(log P))."""
    j = p + i
    d = v - cnt[j]
    if d != 0:
        while j >= 1:
            cnt[j] += d
            j //= 2


@njit()
def rank_job(cnt, i, p):
    """How many of the job's servers come before server ``i`` in index order, from the count tree ``cnt``
    (build_jobs; O(log P))."""
    j, r = p + i, 0
    while j > 1:
        if j % 2 == 1:
            r += cnt[j - 1]
        j //= 2
    return r


@njit()
def _select(cnt, r, p):
    """The server of the ``r``-th (from 0) leaf that counts 1, -1 if there are not that many (O(log P))."""
    if r < 0 or r >= cnt[1]:
        return -1
    j = 1
    while j < p:
        if r < cnt[2 * j]:
            j = 2 * j
        else:
            r -= cnt[2 * j]
            j = 2 * j + 1
    return j - p


@njit()
def nth_job_counted(role, cnt, n, r, p, skip=-1):
    """nth_job (the same server, for every argument) from the count tree ``cnt`` of the job's servers
    (build_jobs), in O(log P) where nth_job walks the roles (O(servers): a burst of 10,000 servers of a
    65,536-server job picked each by a walk was 10^9 steps)."""
    if len(role) == 0:
        return nth_job(role, n, r, skip)
    j = _select(cnt, r, p)
    if j >= 0 and skip >= 0 and role[skip] == JOB and j >= skip:
        j = _select(cnt, r + 1, p)
    return j


@njit()
def start_role(i, job, standbys):
    """Server ``i``'s role when the cluster is laid out (servers.start_roles: the job's, then the standbys, then the
    spares)."""
    return JOB if i < job else STANDBY if i < job + standbys else SPARE


@njit()
def is_job(role, i):
    return len(role) == 0 or role[i] == JOB


@njit()
def next_replayed(rp, n, period, copies, i, g):
    """The first executed step after ``g`` with a fault of cluster server ``i``'s replayed log (servers.py's rules;
    ``rp``: servers.replay_table's N + 1 offsets, then each log server's sorted fault steps in [1, period]); NEVER
    when it has none."""
    log, c = i % n, i // n
    phase = c * period // copies
    lo, hi = n + 1 + rp[log], n + 1 + rp[log + 1]
    if lo == hi:
        return NEVER
    y = g - phase
    m0 = y // period
    r = y - m0 * period
    while lo < hi:  # the first fault step > r
        mid = (lo + hi) // 2
        if rp[mid] <= r:
            lo = mid + 1
        else:
            hi = mid
    if lo < n + 1 + rp[log + 1]:
        return rp[lo] + m0 * period + phase
    return rp[n + 1 + rp[log]] + (m0 + 1) * period + phase


@njit()
def replayed_repair_us(rp, rr, n, period, copies, i, g):
    """The log's repair time (microseconds) of cluster server ``i``'s replayed fault in executed step ``g``
    (``rr``: servers.replay_repair_table, one per fault step of ``rp``), -1 when its log has no fault in that step
    or leaves it open (the repair model's then)."""
    log, c = i % n, i // n
    phase = c * period // copies
    r = (g - phase - 1) % period + 1  # the step of the log's period, in [1, period]
    lo, hi = n + 1 + rp[log], n + 1 + rp[log + 1]
    while lo < hi:  # the first fault step >= r
        mid = (lo + hi) // 2
        if rp[mid] < r:
            lo = mid + 1
        else:
            hi = mid
    if lo < n + 1 + rp[log + 1] and rp[lo] == r:
        return rr[lo - n - 1]
    return -1.0


@njit()
def new_end(i, g, w, hi, lo, ints, floats, mult, fixed, rp, rg, wrg, sched, rel):
    """(hi, lo, the executed step in which server ``i``'s new lifetime, starting after step ``g``, ends): its replayed
    log's next fault (a replay: ``rp``, no draw), or a draw of the lifetime stream ``w`` at (hi, lo) by the plan's
    lifetime law (``ints``, ``floats``: kernel.plan's arrays), or by the short law when its repair did not hold
    (``rel[i]``, cleared: State.srv_relapse; empty without relapses), in operational time when the plan has regimes
    (``rg`` the regime cursor, ``wrg`` their stream) or a rate schedule (``sched``; operational_steps)."""
    n_rp = ints[PI.replay_servers]
    if n_rp:
        return hi, lo, next_replayed(rp, n_rp, ints[PI.replay_period], ints[PI.replay_copies], i, g)
    hi, lo, u = draws.uniform(w, hi, lo)
    if len(rel) and rel[i]:  # a repair that did not hold (servers.py, "Relapses"): exponential of the short mean
        rel[i] = 0
        sc = floats[PF.relapse_scale]
        if len(mult):
            sc *= MULT_ONE / mult[i]
        x = lifetime_x(0, 1.0, sc, u)
        if len(rg) or len(sched):
            return hi, lo, g + operational_steps(g, x, rg, wrg, floats, sched)
        return hi, lo, g + lifetime_steps(0, 1.0, sc, u)
    if len(rg) or len(sched):
        sc = server_scale(i, floats[PF.scale_normal], floats[PF.scale_lemon], floats[PF.lemon_fraction], mult, fixed)
        x = lifetime_x(ints[PI.lifetime_kind], floats[PF.lifetime_shape], sc, u)
        return hi, lo, g + operational_steps(g, x, rg, wrg, floats, sched)
    return hi, lo, g + lifetime_of(i, u, ints[PI.lifetime_kind], floats[PF.lifetime_shape], floats[PF.scale_normal],
                                   floats[PF.scale_lemon], floats[PF.lemon_fraction], mult, fixed)


@njit()
def staff_standbys(role, akey, atree, rep, rtree, stb, n_sb, n_sp, w, withheld, ncl, p, tau, preempt, ready):
    """A gang re-scheduling (servers.Servers.gang): the warm standbys staffed again up to ``w``, from the
    lowest-numbered spares the job may take (each ready after its preemption from ``tau``), then from the first
    servers back from repair (ready at its end), as far as the cluster holds them. No standby is left when it
    starts (a re-scheduling took a spare or waited), so the pools' tree ``atree`` gives the lowest spare; the new
    standbys leave the tree until every one is taken (``stb``: scratch of ``w`` entries). Returns (ready: the last
    one's, n_sb, n_sp, how many were staffed)."""
    k = 0
    while n_sb < w:
        j = atree[1]
        if ncl <= akey[j] < NEVER and n_sp > withheld:
            n_sp -= 1
            ready = max(ready, tau + preempt)
        else:
            j = rtree[1]
            if rep[j] >= NEVER:  # the cluster holds no more
                break
            ready = max(ready, rep[j])
            rep[j] = NEVER
            update(rtree, rep, j, p)
        akey[j] = NEVER
        update(atree, akey, j, p)
        role[j] = STANDBY
        n_sb += 1
        stb[k] = j
        k += 1
    for i in range(k):  # back in the pools' tree, keyed as standbys
        akey[stb[i]] = stb[i]
        update(atree, akey, stb[i], p)
    return ready, n_sb, n_sp, k


@njit()
def back_to_pools(rtree, rep, role, akey, atree, n_sb, n_sp, W, ncl, p, by):
    """The servers whose repair ends by ``by`` (``rep``, first of ``rtree``) back in the pools: to the warm standbys
    up to ``W``, then to the spares (``ncl``: the cluster's servers, a spare's key offset in ``akey``/``atree``).
    Returns (n_sb, n_sp, how many came back)."""
    k = 0
    while rep[rtree[1]] <= by:
        i = rtree[1]
        rep[i] = NEVER
        update(rtree, rep, i, p)
        if n_sb < W:
            role[i], akey[i] = STANDBY, i
            n_sb += 1
        else:
            role[i], akey[i] = SPARE, ncl + i
            n_sp += 1
        update(atree, akey, i, p)
        k += 1
    return n_sb, n_sp, k


@njit()
def count_le(tree, keys, p, limit, stk, out=None):
    """How many servers of ``tree`` (keyed by ``keys``) have a key <= ``limit``: a walk that skips every subtree
    whose first key is later (``stk``: scratch of 2 p + 2 entries); with ``out``, they are written there too (in
    no particular order)."""
    top, n = 1, 0
    stk[0] = 1
    while top > 0:
        top -= 1
        k = stk[top]
        i = tree[k]
        if i < 0 or keys[i] > limit:
            continue
        if k < p:
            stk[top], stk[top + 1] = 2 * k, 2 * k + 1
            top += 2
            continue
        if out is not None:
            out[n] = i
        n += 1
    return n


@njit()
def group_of(grp, i, gs):
    """Job server ``i``'s elastic replica group (docs/model.md, "Elastic replica groups"): with pools ``grp[i] - 1``
    (State.srv_group: a replacement takes the group of the server it replaces), else its block of ``gs``."""
    return grp[i] - 1 if len(grp) else i // gs


@njit()
def group_member(role, grp, gs, G, nsrv, r, skip):
    """The ``r``-th (from 0, in index order) server of group ``G`` other than ``skip``: a misdiagnosis's scapegoat
    among the failing server's group (O(servers) with pools: a scan)."""
    if len(grp) == 0:
        j = G * gs + r
        return j + 1 if j >= skip else j
    for j in range(nsrv):
        if j != skip and role[j] == JOB and grp[j] == G + 1:
            if r == 0:
                return j
            r -= 1
    return -1


@njit()
def group_out(G, srv, tree, p, role, grp, gs, nsrv):
    """Group ``G``'s servers out of the job while it is dropped: no lifetime runs (their ends OUT), as a pool's
    servers'. Returns how many there are."""
    n = 0
    lo, hi = (0, nsrv) if len(grp) else (G * gs, (G + 1) * gs)
    for i in range(lo, hi):
        if is_job(role, i) and group_of(grp, i, gs) == G:
            n += 1
            if srv[i] != OUT:
                srv[i] = OUT
                update(tree, srv, i, p)
    return n


@njit()
def group_back(G, g, srv, tree, p, role, grp, gs, nsrv, w, hi, lo, ints, floats, mult, fixed, rp, rg, wrg, sched,
               rel):
    """Group ``G`` back in the job after executed step ``g``: each of its servers out starts a new lifetime (a server
    joining the job does), in index order. Returns (hi, lo, the lifetimes drawn, the servers)."""
    n, k = 0, 0
    a, b = (0, nsrv) if len(grp) else (G * gs, (G + 1) * gs)
    for i in range(a, b):
        if is_job(role, i) and group_of(grp, i, gs) == G:
            k += 1
            if srv[i] == OUT:
                hi, lo, srv[i] = new_end(i, g, w, hi, lo, ints, floats, mult, fixed, rp, rg, wrg, sched, rel)
                n += 1
                update(tree, srv, i, p)
    return hi, lo, n, k


@njit()
def burst(role, cnt, n, srv, tree, p, g, nsrv, w, sh, sl, k, q, domain, out, apply):
    """A burst in executed step ``g`` (servers.py, "Bursts"): draws of "burst-pick" ``w`` from (sh, sl), the ``k``-th:
    every job server of the domain of a job server drawn uniformly (``domain`` > 0), or 2 + a geometric number
    (``q``) of the job's servers drawn uniformly; struck are those not failing already (end > ``g``) and not out
    with a dropped elastic group (end OUT: a server so drawn is drawn again). The struck servers are written to
    ``out``; with ``apply`` their lifetimes end in step g (``tree`` updated), else nothing changes but the draws
    (an elastic drop's decision before its unit: the same draws again then). Returns (sh, sl, k, how many struck,
    passes over the servers, picks drawn)."""
    sh, sl, u = draws.uniform(w, sh, sl)
    k += 1
    nb, passes, picks = 0, 0, 0
    if domain > 0:
        x = nth_job_counted(role, cnt, n, min(int(u * n), n - 1), p)
        while srv[x] == OUT:
            sh, sl, u = draws.uniform(w, sh, sl)
            k += 1
            x = nth_job_counted(role, cnt, n, min(int(u * n), n - 1), p)
        d0 = x // domain
        for i in range(d0 * domain, min((d0 + 1) * domain, nsrv)):
            if is_job(role, i) and srv[i] > g and srv[i] != OUT:
                out[nb] = i
                nb += 1
    else:
        kb = 2 if q >= 1.0 else 2 + int(math.floor(math.log(u) / math.log1p(-q)))
        avail = 0
        passes += 1
        for i in range(nsrv):
            if is_job(role, i) and srv[i] > g and srv[i] != OUT:
                avail += 1
        kb = min(kb, avail)
        while kb > 0:
            sh, sl, u = draws.uniform(w, sh, sl)
            k += 1
            picks += 1
            i = nth_job_counted(role, cnt, n, min(int(u * n), n - 1), p)
            if srv[i] > g and srv[i] != OUT:
                out[nb] = i
                nb += 1
                srv[i] = -1 - srv[i]  # marked: not struck twice
                kb -= 1
        for j in range(nb):
            srv[out[j]] = -1 - srv[out[j]]
    if apply:
        for j in range(nb):
            srv[out[j]] = g
            update(tree, srv, out[j], p)
    return sh, sl, k, nb, passes, picks
