/*
 * preset — the named points of the stealing policy space (DESIGN.md): `--policy NAME`
 * sets every part (starvation, victims, amount, information, the waiting-time guard,
 * and the placement where the policy has one), and the per-part flags override it.
 *
 *   name        starvation         victims    amount  info        guard  placement
 *   daws        ready              sqrt       half    load-query  off    flds
 *   a2ws        preemptive         a2ws       a2ws    ring        off    ws
 *   parsec      ready+successors   random:1   half    load-query  on     ws
 *   random1     ready              random:1   half    load-query  off    ws
 *   none        (never steals)                                           ws
 *   daws+a2ws   preemptive         a2ws       a2ws    ring        off    flds
 *   lw          ready              leader     single  load-query  off    ws
 *   ctws        ready              token      half    token       off    ws
 *
 * daws+a2ws is the hybrid none of the papers has: DAWS's data-aware placement with
 * A2WS's speed-aware amounts and victims.  lw and ctws are paper 001's baselines
 * (core/policy/lw.h, core/policy/ctws.h): under lw the leader asks nobody's load (it
 * holds the movable tasks) and `single` is one task per idle slot of the asking worker.
 *
 * Owns nothing; pure.  Called by core/client/dataopts.c and tests/unit/test_parsec.c.
 */
#ifndef JACKDAW_PRESET_H
#define JACKDAW_PRESET_H

#include "core/policy/placement.h"
#include "core/policy/steal.h"

/*
 * Applies preset `name` over *s and *p (which hold the defaults or earlier settings).
 * Only the placement policy of *p is touched.  0, or -EINVAL for an unknown name.
 */
int preset_apply(const char *name, struct steal_params *s, struct placement_params *p);

/* "daws, a2ws, parsec, random1, none, daws+a2ws, lw, ctws", for messages and help. */
const char *preset_names(void);

#endif
