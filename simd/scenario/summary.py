"""``simd check-config``'s line per scenario (its job, its checkpoint and validation, its MTBF, its mechanisms) and
per drill (its effects, scenarios and duration)."""

from __future__ import annotations

import math
from dataclasses import replace

from simd.engine import compile_spec, job_hazards
from simd.scenario.schema import Config, Drill, Scenario


def summary(s: Scenario) -> str:
    """One line per scenario for ``simd check-config``."""
    v = s.validation.interval_steps
    spec = s.job_spec()
    # The servers' plan without the step-time tables: their hazard and lemons do not depend on stragglers, and
    # a table with jitter costs ~0.2 s to build (simd.engine.stragglers), the bulk of a check-config.
    plan = compile_spec(replace(spec, stragglers=None)) if s.servers is not None else None
    # over the fleet's types, and the shadow ranks' duplicates; with servers, their mean rates (lemons included)
    h = plan.hard_hazard if plan is not None else job_hazards(spec)[0]
    if plan is not None and plan.replay_servers:  # a replayed log: its faults on the job's servers per period
        n, offsets = plan.replay_servers, plan.replay[:plan.replay_servers + 1]
        faults = sum(offsets[i % n + 1] - offsets[i % n] for i in range(plan.servers))
        h = faults / plan.replay_period
    mtbf = spec.step_seconds / h / 3600 if h > 0 else math.inf
    dropping = [c.name for c in spec.cause_list if c.elastic]  # the causes that drop an elastic group
    extra = ""
    if s.fleet is not None:
        extra += ", fleet " + " + ".join(f"{a.count} {a.type}" for a in s.fleet)
    if s.shadow is not None:
        extra += f", shadow ranks ({s.shadow.fraction:g} of the ranks, overhead {s.shadow.overhead:g})"
    if s.failures is not None and s.failures.causes is not None:
        extra += f", causes {s.failures.causes if isinstance(s.failures.causes, str) else 'custom'}"
        found = [(c, spec.detection_seconds) for c in s.failures.cause_shares() or ()
                 if (spec := s.failures.cause_spec(c)) is not None and spec.detection_seconds]
        if found:  # a hang found by a watchdog's timeout, a detection latency of its own
            extra += " (" + ", ".join(f"{c} found after {d:g} s" for c, d in found) + ")"
    if s.recovery.strategy != "cold":
        extra += f", {s.recovery.strategy} recovery"
    if (phases := s.restart_phases_us()) is not None:
        extra += (", cold restart " + " + ".join(f"{k} {v / 1e6:.4g} s" for k, v in phases.items())
                  + f" = {s.cold_restart_seconds:.4g} s at {s.gpus} GPUs")
    if (ip := s.recovery.in_process) is not None:
        extra += (f", in-process restarts for {', '.join(ip.causes)} ({ip.seconds:g} s, "
                  f"{ip.success_probability:g} succeeding)")
    if (cl := s.recovery.crash_loop) is not None:
        extra += (f", crash loops{' of ' + ', '.join(cl.causes) if cl.causes else ''} ({cl.failure_probability:g} of "
                  f"restarts failing, after {_count(cl.max_attempts, 'attempt')} a {cl.escalation_seconds:g} s "
                  "intervention)")
    if (mig := s.recovery.migration) is not None:
        extra += (", live migration to a warm standby in " + f"{mig.seconds:g} s of "
                  + ", ".join(f"{share:g} of {name}" for name, share in mig.causes.items()) + " failures")
    if (el := s.recovery.elastic) is not None:
        drop = (f"{_listed(dropping)} failures drop theirs" if dropping else "no failure drops one") \
            + ("" if el.causes else ", the causes that take a server down")
        extra += (f", elastic replica groups ({el.groups}, at least {el.min_groups} running; {drop}; "
                  f"rejoining in {el.replace_seconds:g} + {el.heal_seconds:g} s; overhead {el.overhead:g})")
    if s.stragglers:
        extra += f", stragglers (jitter {s.stragglers.jitter_seconds:g} s, {s.stragglers.slow_ranks} slow)"
    if s.servers is not None:
        sv, lt = s.servers, s.servers.lifetime
        lemons = plan.lemons
        extra += (f", {_count(s.gpus // sv.gpus_per_server, 'server')} of {sv.gpus_per_server} GPUs"
                  + (f" ({_count(lemons, 'lemon')} x{sv.lemons.multiplier:g})" if lemons else "")
                  + (f", rates x gamma (shape {sv.rates.gamma_shape:g})" if sv.rates else "")
                  + (f", {_count(sv.warm_standbys or 0, 'warm standby', 'warm standbys')}, "
                     f"{_count(sv.spares.count if sv.spares else 0, 'spare')}, "
                     f"{sv.repair.automatic.distribution} repairs"
                     + (f" ({sv.repair.manual.probability:g} to manual)" if sv.repair.manual else "")
                     if sv.pools else "")
                  + (", re-scheduled as a gang (the job and its standbys staffed)" if sv.rescheduling == "gang" else "")
                  + (f", diagnosis {sv.diagnosis.probability:g} ({sv.diagnosis.misattribution:g} misattributed)"
                     if sv.diagnosis else "")
                  + (f", retired after {_count(sv.retirement.failures, 'failure')} in "
                     f"{sv.retirement.window_seconds:g} s" if sv.retirement else "")
                  + (f", bursts {sv.bursts.per_day:g} a day of "
                     + (f"{sv.bursts.domain_servers}-server domains" if sv.bursts.domain_servers else
                        f"2 + geometric servers (mean {sv.bursts.mean_size or 2:g})") if sv.bursts else "")
                  + (f", replaying {sv.replay.log} ({sv.replay.servers or 'its'} servers"
                     + ("; its repair times" if sv.replay.repairs == "log" else "") + ")" if sv.replay else
                     f", {lt.distribution} lifetimes")
                  + (f" (shape {lt.shape:g})" if lt.distribution == "weibull" else
                     f" (sigma {lt.sigma:g})" if lt.distribution == "lognormal" else "")
                  + _regimes(sv.regimes) + _schedule(sv.rate_schedule)
                  + (f", {sv.relapse.probability:g} of repairs not holding (a short lifetime of mean "
                     f"{sv.relapse.mean_hours:g} h)" if sv.relapse else ""))
    if s.replicas > 1:
        extra += f", {s.replicas} replicas"
    if s.checkpoint.hyper is not None:
        extra += (f", hyper-checkpointing every {s.checkpoint.hyper.interval_steps} steps for "
                  f"{s.checkpoint.hyper.window_steps} steps after an SDC detection")
    if s.committed_sdc:
        retention = s.sdc.retention_checkpoints or s.checkpoint.retention_checkpoints
        extra += f", committed SDCs ({_count(len(s.sdc.detectors), 'detector')}, {_kept(retention)})"
    return (f"{s.name}: {s.gpus} GPUs, {s.target_steps} steps of {s.step_seconds:g} s, "
            f"checkpoint every {s.checkpoint.interval_steps} steps ({s.checkpoint.seconds:g} s"
            + (f", load {s.checkpoint.load_seconds:g} s" if s.checkpoint.load_seconds else "")
            + (f", written asynchronously in {s.checkpoint.write_seconds:g} s, steps "
               + (f"{s.checkpoint.write_slowdown:g}x" if s.checkpoint.write_slowdown != 1 else "not slowed")
               + " meanwhile" if s.checkpoint.write_seconds else "")
            + (f", {s.checkpoint.save_failure.probability:g} of saves failing" if s.checkpoint.save_failure else "")
            + (f", {s.checkpoint.corrupt_on_load:g} of loads found corrupt" if s.checkpoint.corrupt_on_load else "")
            # (with committed SDCs the retention is said with them)
            + (f", {_kept(s.checkpoint.retention_checkpoints)}"
               if (s.checkpoint.retention_checkpoints or 1) > 1 and not s.committed_sdc else "")
            + "), " + _tier(s.checkpoint.tiers) + _jit(s.checkpoint.just_in_time)
            + (f"validation every {v} steps ({s.validation.seconds:g} s)" if v else "no validation")
            + f", job MTBF {mtbf:.3g} h" + _mtbf_note(s) + extra)


def _count(n: int, one: str, many: str | None = None) -> str:
    """``n`` and the noun, singular for 1: "1 warm standby", "8 warm standbys", "0 spares"."""
    return f"{n} {one if n == 1 else many or one + 's'}"


def _listed(names: list[str]) -> str:
    """"gpu", "gpu and host", "gpu, host and software"."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _mtbf_note(s: Scenario) -> str:
    """What the MTBF leaves out (" (...)"; "" when nothing): it is the servers' mean rate (the plan's hard_hazard,
    their exponential equivalent, simd.engine.spec._servers), where a job of new servers with lifetimes that are
    not memoryless, a rate schedule, regimes and bursts interrupt it otherwise (a fitted InfiniteHBD file: 123 h
    at the mean rate, one interruption per ~14.5 h of a 10,000-step job from new servers of Weibull shape 0.32)."""
    sv = s.servers
    if sv is None or sv.replay is not None:
        return ""
    lt, parts = sv.lifetime, []
    if lt.distribution == "weibull" and lt.shape != 1:
        parts.append(f"new servers (at the job's start, after a repair) of Weibull shape {lt.shape:g} fail "
                     + ("more often at first" if lt.shape < 1 else "less often at first"))
    elif lt.distribution == "lognormal":
        parts.append(f"new servers' lognormal lifetimes (sigma {lt.sigma:g}) fail at a rate that changes with age")
    aside = [name for name, on in (("its rate schedule", sv.rate_schedule), ("regimes", sv.regimes),
                                   ("bursts", sv.bursts), ("repairs that do not hold", sv.relapse)) if on]
    if aside:
        parts.append(" and ".join(aside) + " not in it")
    if not parts:
        return ""
    return " (the servers' mean rate; " + "; ".join(parts) + ": simd simulate counts them)"


def _tier(tiers) -> str:
    """check-config's words for the memory tiers ("": none), the one under the persistent checkpoint first."""
    return "".join(_one_tier(kind, t) for kind, t in tiers.given) if tiers is not None else ""


def _one_tier(kind: str, t) -> str:
    """check-config's words for a memory tier."""
    # where a save is (its replication: servers per shard) said apart from how many saves are kept (retention)
    where = (f"each shard held by {t.copies} servers, jump {t.jump_servers}" if kind == "peer"
             else "each shard held by its own server")
    failing = f", {t.save_failure.probability:.2g} of saves failing" if t.save_failure else ""
    written = f", written in {t.write_seconds:g} s" if t.write_seconds else ""
    corrupt = f", {t.corrupt_on_load:g} of loads found corrupt" if t.corrupt_on_load else ""
    kept = f", {_kept(t.retention_checkpoints)}" if t.retention_checkpoints > 1 else ""
    load = f", load {t.load_seconds:g} s" if t.load_seconds else ""  # (as the persistent checkpoint's: unset, unsaid)
    return (f"a {kind} tier every {t.interval_steps} steps ({t.seconds:g} s{written}{load}, "
            f"{where}{failing}{corrupt}{kept}), ")


def _kept(n: int) -> str:
    """A retention in check-config's words: how many of the newest saves are kept (not how many servers hold one
    save: a peer tier's replication, said as "each shard held by m servers")."""
    return f"the {n} newest saves kept" if n > 1 else "the newest save kept"


def _jit(jit) -> str:
    """check-config's words for just-in-time saves ("": none)."""
    if jit is None:
        return ""
    share = f"{jit.share:.0%} of the failures of " if jit.share < 1 else ""
    return f"just-in-time saves after {share}{', '.join(jit.causes) if jit.causes else 'every cause'} " \
           f"({jit.seconds:g} s), "


def _regimes(regimes) -> str:
    """check-config's words for the servers' hidden regimes ("": none)."""
    if regimes is None:
        return ""
    calm, stormy = regimes.calm, regimes.stormy
    return (f", regimes (calm x{calm.multiplier:.3g} for {calm.mean_days:.3g} days, stormy x{stormy.multiplier:.3g} "
            f"for {stormy.mean_days:.3g} days on average)")


def _schedule(pieces) -> str:
    """check-config's words for the servers' rate schedule ("": none)."""
    if pieces is None:
        return ""
    m = [p.multiplier for p in pieces]
    if len(m) == 1:
        return f", rates x{m[0]:.3g} throughout"
    return (f", a rate schedule of {len(m)} pieces (x{min(m):.3g} to x{max(m):.3g}, the last x{m[-1]:.3g} from day "
            f"{pieces[-1].from_day:.4g})")


def drill_summary(d: Drill, config: Config) -> str:
    """One line per drill for ``simd check-config``: its scenarios, duration, start and effects (those that change
    something)."""
    effects = d.effects.model_dump(exclude_defaults=True, exclude_none=True)
    shown = ", ".join(f"{k} {_compact(v)}" for k, v in effects.items()) or "no effect"
    start = f", at simulated second {d.start_at_seconds:g}" if d.start_at_seconds is not None else ", on demand"
    return (f"drill {d.name}: {shown} on {', '.join(x.name for x in config.drill_targets(d))} for "
            f"{d.duration_seconds:g} simulated s{start}")


def _compact(v) -> str:
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_compact(x)}" for k, x in v.items()) + "}"
    return f"{v:g}" if isinstance(v, float) else str(v)
