/* plan_catalog.h - the parts catalog of the planner (plan_catalog.c).
 *
 * A catalog lists switch models, transceiver modules and cables with the
 * figures the layout needs (ports, speed, power, reach) and, optionally,
 * prices. The bundled default (plan_catalog_default.c) holds only figures
 * from public datasheets, each entry with its source, and no prices; a user
 * catalog (--catalog FILE) has the same format (docs/planning.md). */
#ifndef TOPSIM_PLAN_CATALOG_H
#define TOPSIM_PLAN_CATALOG_H

#include <stdint.h>

#include "topsim/ts_error.h"

#define CAT_MAX 64

typedef struct cat_switch {
  char name[48];
  uint32_t ports;          /* logical ports at `speed` */
  double speed;            /* bytes/s per port */
  uint32_t ports_per_cage; /* 2: twin-port cages (one module, two ports) */
  uint32_t units;          /* rack units (0: not stated, counted as 1) */
  double power;            /* W, < 0: not stated */
  double price;            /* < 0: not priced */
} cat_switch;

typedef struct cat_optic {
  char name[48];
  uint32_t ports;          /* links per module (2: twin-port) */
  double speed;            /* bytes/s per link */
  char fiber[8];           /* mmf or smf: both ends must match */
  double reach;            /* m */
  double power, price;     /* W per module (< 0: not stated), price */
} cat_optic;

typedef struct cat_cable {
  char name[48];
  char kind[8];            /* dac, aoc, fiber */
  char fiber[8];           /* kind fiber: mmf or smf */
  double speed;            /* bytes/s per link; 0: any */
  double reach;            /* m; fiber: 0 = the optics decide */
  double power;            /* W per end (active cables), < 0 not stated */
  double price;
} cat_cable;

typedef struct plan_catalog {
  cat_switch sw[CAT_MAX];
  cat_optic op[CAT_MAX];
  cat_cable cb[CAT_MAX];
  uint32_t nsw, nop, ncb;
} plan_catalog;

/* The bundled catalog's YAML text. */
extern const char plan_catalog_default[];

/* Loads path (NULL: the bundled text) into *c. Returns 0, or TS_ENOINPUT /
 * TS_ESYNTAX / TS_ESCHEMA / TS_ELIMIT with file:line:column in d. */
int plan_catalog_load(const char *path, plan_catalog *c, ts_diag *d);

/* Switch `name`, or (name NULL) the first whose ports x m = radix at speed
 * / m for m = 1 or 2 (a 64 x 800G switch run as 128 x 400G). NULL if none;
 * *split gets m. */
const cat_switch *plan_catalog_switch(const plan_catalog *c, const char *name,
                                      uint32_t radix, double speed,
                                      uint32_t *split);

#endif
