"""replay_bound.py: a lower bound on what the workload costs when the
trace's Spot capacity is shared by all its jobs (bench/replay --bound).

The oracle (replaylib.py, policy 4) lets every job use a zone that has
one VM in a round; 120 jobs cannot all.  This bound keeps each zone's
capacity in each round (0-16 VMs) for all jobs together, and is still
a lower bound on any schedule, from two relaxations:

  LP   a job j may run in round t of its window [arrival, deadline) in
       any zone z with capacity, or on the cheapest capacity that is
       not preempted (flex-start or on-demand, as the oracle's kinds
       allow), for a fraction x[j,t,z] in [0, 1] of the round:

         min  sum price[z,t] x[j,t,z]
         s.t. sum_z x[j,t,z] <= 1               one VM a job a round
              sum_{t,z} x[j,t,z] >= W_j + o_j   its work, one start
              sum_j x[j,t,z] <= cap[z,t]        the zone's VMs

       Any real schedule is a solution (its lost work and further
       starts only add rounds), so the LP's optimum is a lower bound.
       It knows no preemption, checkpoint or restart beyond the first.

  Lagrange   the capacity rows priced with multipliers mu[z,t] >= 0:

         L(mu) = sum_j oracle_j(price + mu) - sum mu[z,t] cap[z,t]

       where oracle_j is the oracle's exact schedule of job j alone
       (its checkpoints, restarts and deadline) at the raised prices.
       For every mu >= 0 this is a lower bound (weak duality); mu = 0 is
       the oracle.  The LP's duals, scaled, give the mu tried here.

The bound printed is the greatest of the oracle, the LP and the
Lagrangian values.  It needs scipy (Debian's python3-scipy) for the LP;
without it bench/replay --bound stops with an error that names it.
"""

import replaylib as rl


def _cheapest_other(prices, kinds):
    """$/h of the cheapest kind that is not preempted, or None."""
    ks = [getattr(prices, k) for k in ("flex", "standard", "vertex")
          if k in kinds]
    return min(ks) if ks else None


def lp(trace, prices, jobs, kinds):
    """The LP bound: (dollars, {(zone index, round): dual >= 0}, zones).
    Raises ImportError without scipy, RuntimeError if HiGHS fails."""
    import numpy as np
    from scipy import sparse
    from scipy.optimize import linprog

    h = trace.round_s / 3600.0
    R = trace.rounds
    zones = list(trace.zones) if "spot" in kinds else []
    spot = {z: prices.spot_series(z) for z in zones}
    other = _cheapest_other(prices, kinds)
    rows, cols, vals, b, cost = [], [], [], [], []
    cap_row = {}
    nrow = nvar = 0
    for j in jobs:
        jr = rl.JobR(j, trace.round_s, R)
        work = nrow
        nrow += 1
        b.append(-(jr.W + jr.o))
        for t in range(jr.a, min(jr.D, R)):
            one = nrow
            nrow += 1
            b.append(1)
            opts = [(zi, spot[z][t] * h) for zi, z in enumerate(zones)
                    if trace.cap[z][t] >= 1]
            if other is not None:
                opts.append((-1, other * h))
            for zi, c in opts:
                rows += [work, one]
                cols += [nvar, nvar]
                vals += [-1.0, 1.0]
                if zi >= 0:
                    key = (zi, t)
                    if key not in cap_row:
                        cap_row[key] = nrow
                        nrow += 1
                        b.append(trace.cap[zones[zi]][t])
                    rows.append(cap_row[key])
                    cols.append(nvar)
                    vals.append(1.0)
                cost.append(c)
                nvar += 1
    A = sparse.csr_matrix((vals, (rows, cols)), shape=(nrow, nvar))
    res = linprog(np.array(cost), A_ub=A, b_ub=np.array(b, dtype=float),
                  bounds=(0, 1), method="highs")
    if res.status != 0:
        raise RuntimeError("the LP: %s" % res.message)
    marg = res.ineqlin.marginals
    mu = {k: -marg[r] for k, r in cap_row.items() if -marg[r] > 1e-12}
    return res.fun, mu, zones


def lagrange(trace, prices, jobs, kinds, mu, zones, scale):
    """L(scale * mu): the oracle of every job at Spot prices raised by
    the multipliers, less what the multipliers price the capacity at."""
    h = trace.round_s / 3600.0
    R = trace.rounds
    offers = rl.oracle_offers(trace, prices,
                              tuple(k for k in kinds if k != "spot"))
    for zi, z in enumerate(zones):
        sp = prices.spot_series(z)
        offers.append(rl.Offer(
            "spot:" + z, [c >= 1 for c in trace.cap[z][:R]],
            [sp[t] * h + scale * mu.get((zi, t), 0.0) for t in range(R)]))
    total = 0.0
    for j in jobs:
        v = rl.oracle_cost(rl.JobR(j, trace.round_s, R), offers, R)
        if v == rl.INF:
            return rl.INF
        total += v
    return total - scale * sum(v * trace.cap[zones[zi]][t]
                               for (zi, t), v in mu.items())


def bound(trace, prices, jobs, kinds, oracle_total):
    """(bound, {"lp": .., "lagrange": .., "scale": ..}); the bound is
    at least ORACLE_TOTAL."""
    lp_usd, mu, zones = lp(trace, prices, jobs, kinds)
    best, best_s = -rl.INF, None
    for s in (0.5, 0.75, 1.0, 1.25):
        v = lagrange(trace, prices, jobs, kinds, mu, zones, s)
        if v != rl.INF and v > best:
            best, best_s = v, s
    return (max(oracle_total, lp_usd, best),
            {"lp": lp_usd, "lagrange": best, "scale": best_s})
