/* ts_report_check.h - reports of a `topsim check` result (ts_check.h).
 *
 * Text and JSON are deterministic (no wall times); JUnit XML carries each
 * case's wall time, as CI consumers expect. All return 0, TS_ENOMEM or
 * TS_EIO; nothing returned needs freeing. */
#ifndef TOPSIM_TS_REPORT_CHECK_H
#define TOPSIM_TS_REPORT_CHECK_H

#include <stdio.h>

#include "topsim/ts_check.h"

/* One line per topology ("PASS file (name): N checks"), then for every
 * failed, errored or skipped case its name and one line per moved value
 * ("compute plane leaf oversubscription 1:1 -> 2:1 (rule: <= 1:1)"), then
 * a total line. verbose also lists passing cases. */
int ts_report_check_text(const ts_check_result *r, int verbose, FILE *out);

/* The same as one JSON object: totals, then suites with every case, its
 * status, message and moves (values in base units, text as printed). */
int ts_report_check_json(const ts_check_result *r, FILE *out);

/* JUnit XML written with libxml2: <testsuites> with one <testsuite> per
 * topology (name = file) and one <testcase> per check (classname = the
 * topology file, time = wall seconds); failures carry <failure message=
 * type="topsim.check"> with every moved value, one per line; errors
 * <error>, skipped cases <skipped>. Valid against the Jenkins/Ant JUnit
 * schema (tests/data/junit.xsd). */
int ts_report_check_junit(const ts_check_result *r, FILE *out);

#endif
