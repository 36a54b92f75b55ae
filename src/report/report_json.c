/* report_json.c - JSON building helpers shared by the reports. */
#include "report/report_json.h"

void report_jset(json_t *o, const char *k, json_t *v, int *bad) {
  if (!o || !v) {
    json_decref(v);
    (*bad)++;
  } else if (json_object_set_new(o, k, v)) { /* v already released */
    (*bad)++;
  }
}

void report_japp(json_t *a, json_t *v, int *bad) {
  if (!a || !v) {
    json_decref(v);
    (*bad)++;
  } else if (json_array_append_new(a, v)) {
    (*bad)++;
  }
}
