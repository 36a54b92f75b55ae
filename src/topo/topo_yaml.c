/* topo_yaml.c - hardened YAML reader: libyaml events -> small read-only tree.
 *
 * First step of the load stage. libyaml's parser (yaml_parser_parse, not its
 * document loader) yields events; this file folds them into topo_ynode trees
 * and enforces what libyaml does not check: duplicate keys, alias cycles,
 * undefined aliases, alias bombs, nesting depth, input size.
 *
 * Grammar accepted (YAML 1.1 as libyaml parses it, narrowed):
 *   stream   ::= document              exactly one; none -> "empty document"
 *   document ::= node                  a plain empty root ("---") is empty too
 *   node     ::= scalar | seq | map | alias      (anchors on any node)
 *   seq      ::= node*                 block or flow
 *   map      ::= (key node)*           keys unique per map, compared bytewise
 *   key      ::= scalar | alias-to-scalar
 *   alias    ::= '*' name              name anchored earlier, its node closed
 * Tags and merge keys are not interpreted: a tag is dropped and "<<" is an
 * ordinary key. Input must be UTF-8 (a leading UTF-8 BOM is skipped).
 * A node's position is that of its first token, so an anchored node starts
 * at its '&'.
 *
 * Limits: TOPO_YAML_MAX_BYTES of input; TOPO_YAML_MAX_DEPTH open collections
 * (the root collection is depth 1; scalars do not add depth);
 * TOPO_YAML_MAX_EXPANDED nodes counted as if every alias were a copy. The
 * running total counts physical nodes too, so it also bounds the arena.
 *
 * Invariants: every node, string and item array lives in the arena and is
 * freed only with the document. An alias shares its anchor's node (the tree
 * is a DAG). A collection is open from its start event to its end event; its
 * children wait on one scratch vector and are copied into an exact-sized
 * arena array at the end. An anchor's size is the growth of the running total
 * while its node was open, i.e. its expanded node count.
 *
 * Cost of each primitive:
 *   ya_alloc         O(1) amortized bump allocation in 64 KiB chunks
 *   scalar event     O(length) copy; O(1) expected duplicate check as a key
 *   collection end   O(children) copy out of the scratch vector
 *   alias event      O(1) expected anchor lookup; nothing is copied
 *   duplicate check  O(1) expected: one hash of (map id, key bytes) per parse
 *   topo_ymap_get    O(pairs) linear scan
 *   parse            O(input) time and memory; topo_ydoc_free O(chunks)
 */
#include "topo/topo_yaml.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

/* ---- arena ------------------------------------------------------------ */

#define YA_CHUNK (64u << 10)
/* 8, not max_align_t's 16: the arena holds only nodes, pointers, strings
 * and yp_anchor (uint64_t), and 16 would round a 48-byte node up to 64. */
#define YA_ALIGN ((size_t)8)
_Static_assert(_Alignof(topo_ynode) <= 8 && _Alignof(uint64_t) <= 8 &&
                   _Alignof(void *) <= 8,
               "arena alignment too small");

typedef struct ya_chunk {
  struct ya_chunk *next;
  size_t used, size;
  max_align_t data[];
} ya_chunk;

typedef struct ya_arena {
  ya_chunk *head; /* the chunk being filled; big blocks sit behind it */
} ya_arena;

/* The document and its arena are one malloc block (doc first). */
typedef struct ya_doc {
  topo_ydoc pub;
  ya_arena arena;
} ya_doc;

static ya_chunk *ya_chunk_new(size_t size) {
  ya_chunk *c = malloc(sizeof *c + size);
  if (c) *c = (ya_chunk){NULL, 0, size};
  return c;
}

/* Returns n bytes aligned for any type, or NULL when out of memory. Blocks
 * over a quarter chunk get their own chunk, linked behind the head so the
 * head keeps filling. */
static void *ya_alloc(ya_arena *a, size_t n) {
  if (n > SIZE_MAX / 2) return NULL;
  n = (n + YA_ALIGN - 1) & ~(size_t)(YA_ALIGN - 1);
  ya_chunk *h = a->head;
  if (h && h->size - h->used >= n) {
    h->used += n;
    return (char *)h->data + h->used - n;
  }
  ya_chunk *c = ya_chunk_new(n > YA_CHUNK ? n : YA_CHUNK);
  if (!c) return NULL;
  c->used = n;
  if (h && n > YA_CHUNK / 4) {
    c->next = h->next;
    h->next = c;
  } else {
    c->next = h;
    a->head = c;
  }
  return c->data;
}

static void ya_free_all(ya_arena *a) {
  for (ya_chunk *c = a->head, *next; c; c = next) {
    next = c->next;
    free(c);
  }
  a->head = NULL;
}

/* ---- hash: anchors (tag 0) and keys of map number `tag` --------------- */

typedef struct yh_slot {
  const char *s; /* NULL: empty slot; else arena bytes */
  uint32_t len, tag;
  uint64_t hash;
  void *val;     /* anchors: yp_anchor *; keys: the first key node */
} yh_slot;

typedef struct yh_table {
  yh_slot *v;
  size_t cap, n; /* cap is 0 or a power of two; n <= cap / 2 */
} yh_table;

/* FNV-1a with a splitmix finalizer so the low bits used for probing are
 * mixed. Unkeyed: inputs are topology files, not hostile network traffic,
 * and the node budget caps the damage of crafted collisions. */
static uint64_t yh_hash(uint32_t tag, const char *s, uint32_t len) {
  uint64_t h = 1469598103934665603ull ^ ((uint64_t)tag << 32);
  for (uint32_t i = 0; i < len; i++)
    h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 29);
}

/* The slot holding (tag, s) or the empty slot where it would go. */
static yh_slot *yh_find(const yh_table *t, uint32_t tag, const char *s,
                        uint32_t len, uint64_t hash) {
  size_t mask = t->cap - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    yh_slot *e = &t->v[i];
    if (!e->s || (e->hash == hash && e->tag == tag && e->len == len &&
                  memcmp(e->s, s, len) == 0))
      return e;
  }
}

static int yh_reserve(yh_table *t) {
  if (2 * (t->n + 1) <= t->cap) return 0;
  yh_table nt = {NULL, t->cap ? 2 * t->cap : 64, t->n};
  nt.v = calloc(nt.cap, sizeof *nt.v);
  if (!nt.v) return TS_ENOMEM;
  for (size_t i = 0; i < t->cap; i++) {
    const yh_slot *e = &t->v[i];
    if (e->s) *yh_find(&nt, e->tag, e->s, e->len, e->hash) = *e;
  }
  free(t->v);
  *t = nt;
  return 0;
}

/* Finds or inserts (tag, s); s must outlive the table. A new slot has
 * val == NULL. */
static int yh_put(yh_table *t, uint32_t tag, const char *s, uint32_t len,
                  yh_slot **out) {
  if (yh_reserve(t)) return TS_ENOMEM;
  uint64_t hash = yh_hash(tag, s, len);
  yh_slot *e = yh_find(t, tag, s, len, hash);
  if (!e->s) {
    *e = (yh_slot){s, len, tag, hash, NULL};
    t->n++;
  }
  *out = e;
  return 0;
}

static void *yh_get(const yh_table *t, uint32_t tag, const char *s) {
  if (!t->cap) return NULL;
  uint32_t len = (uint32_t)strlen(s);
  const yh_slot *e = yh_find(t, tag, s, len, yh_hash(tag, s, len));
  return e->s ? e->val : NULL;
}

/* ---- parser state ----------------------------------------------------- */

typedef struct yp_anchor {
  topo_ynode *node;
  uint64_t size; /* expanded node count, valid once closed */
  int open;      /* 1 while the anchored collection is being built */
} yp_anchor;

typedef struct yp_frame {
  topo_ynode *node;    /* the open collection */
  yp_anchor *anchor;   /* its anchor or NULL */
  size_t base;         /* its first child in yp->kids */
  uint64_t total0;     /* running total before this node was counted */
  uint32_t map_id;     /* hash tag of its keys (maps only) */
} yp_frame;

typedef struct yp_state {
  yaml_parser_t parser;
  ya_arena *arena;
  topo_ydoc *doc;
  ts_diag *d;
  const char *buf;     /* the input after any BOM */
  size_t len, skipped; /* skipped: BOM bytes, for file offsets in messages */
  yp_frame stack[TOPO_YAML_MAX_DEPTH];
  int depth;
  topo_ynode **kids;   /* children of all open collections, innermost last */
  size_t nkids, capkids;
  yh_table hash;
  uint64_t total;      /* expanded node count so far */
  uint32_t maps;       /* map ids handed out (0 is the anchor tag) */
  int docs;
} yp_state;

/* Sets an error at a libyaml mark (0-based) and returns code. */
__attribute__((format(printf, 4, 5))) static int
yp_err(yp_state *yp, int code, yaml_mark_t m, const char *fmt, ...) {
  char msg[sizeof yp->d->msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return ts_diag_set(yp->d, code, yp->doc->file, (int)m.line + 1,
                     (int)m.column + 1, "%s", msg);
}

static int yp_nomem(yp_state *yp) {
  return ts_diag_set(yp->d, TS_ENOMEM, yp->doc->file, 0, 0, "out of memory");
}

/* ---- positions for libyaml errors ------------------------------------- */

/* Advances a 1-based (line, column-in-characters) position over byte i.
 * Line breaks are LF, CRLF and CR, as in libyaml (NEL/LS/PS are counted as
 * ordinary characters: a rare mismatch that only shifts error columns). */
static void yp_step(const char *b, size_t len, size_t i, int *line, int *col) {
  unsigned char c = (unsigned char)b[i];
  if (c == '\n' || (c == '\r' && (i + 1 == len || b[i + 1] != '\n'))) {
    ++*line;
    *col = 1;
  } else if (c != '\r' && (c & 0xC0) != 0x80) {
    ++*col;
  }
}

/* Position of byte off (libyaml reports reader errors as byte offsets). */
static void yp_pos_of(const char *b, size_t len, size_t off, int *line,
                      int *col) {
  *line = *col = 1;
  for (size_t i = 0; i < off && i < len; i++) yp_step(b, len, i, line, col);
}

/* Byte at a libyaml mark (0-based line/column in characters), or -1. */
static int yp_byte_at(const char *b, size_t len, yaml_mark_t m) {
  int line = 1, col = 1;
  for (size_t i = 0; i < len && (size_t)line <= m.line + 1; i++) {
    if ((size_t)line == m.line + 1 && (size_t)col == m.column + 1 &&
        ((unsigned char)b[i] & 0xC0) != 0x80)
      return (unsigned char)b[i];
    yp_step(b, len, i, &line, &col);
  }
  return -1;
}

/* libyaml's reader has no mark, only a byte offset: say the input is not
 * text and where. */
static int yp_reader_error(yp_state *yp) {
  const yaml_parser_t *p = &yp->parser;
  size_t off = p->problem_offset;
  int line, col;
  yp_pos_of(yp->buf, yp->len, off, &line, &col);
  if (off >= yp->len)
    return ts_diag_set(yp->d, TS_ESYNTAX, yp->doc->file, line, col,
                       "binary or non-UTF-8 input: %s at end of input",
                       p->problem);
  return ts_diag_set(yp->d, TS_ESYNTAX, yp->doc->file, line, col,
                     "binary or non-UTF-8 input: %s "
                     "(byte 0x%02X at offset %zu)",
                     p->problem, (unsigned char)yp->buf[off],
                     off + yp->skipped);
}

/* Scanner and parser errors: libyaml's problem at its mark, plus the
 * context ("while parsing a flow sequence") and where that began. libyaml
 * says nothing specific about tabs, so name them when one is at the mark. */
static int yp_syntax_error(yp_state *yp) {
  const yaml_parser_t *p = &yp->parser;
  yaml_mark_t m = p->problem_mark, c = p->context_mark;
  const char *prob = p->problem ? p->problem : "malformed YAML";
  const char *tab = yp_byte_at(yp->buf, yp->len, m) == '\t'
                        ? "; tabs cannot be used for indentation" : "";
  if (!p->context)
    return yp_err(yp, TS_ESYNTAX, m, "%s%s", prob, tab);
  if (c.line == m.line && c.column == m.column)
    return yp_err(yp, TS_ESYNTAX, m, "%s (%s)%s", prob, p->context, tab);
  return yp_err(yp, TS_ESYNTAX, m, "%s (%s started at line %zu, column %zu)%s",
                prob, p->context, c.line + 1, c.column + 1, tab);
}

static int yp_libyaml_error(yp_state *yp) {
  switch (yp->parser.error) {
  case YAML_MEMORY_ERROR: return yp_nomem(yp);
  case YAML_READER_ERROR: return yp_reader_error(yp);
  default: return yp_syntax_error(yp);
  }
}

/* ---- building the tree ------------------------------------------------ */

static topo_ynode *yp_node(yp_state *yp, topo_ykind kind, yaml_mark_t m) {
  topo_ynode *n = ya_alloc(yp->arena, sizeof *n);
  if (n)
    *n = (topo_ynode){.kind = kind, .line = (uint32_t)m.line + 1,
                      .col = (uint32_t)m.column + 1};
  return n;
}

static char *yp_strdup(yp_state *yp, const void *s, size_t len) {
  char *p = ya_alloc(yp->arena, len + 1);
  if (p) {
    memcpy(p, s, len);
    p[len] = '\0';
  }
  return p;
}

/* Adds add expanded nodes to the running total; alias names the alias that
 * added them, if any. */
static int yp_count(yp_state *yp, uint64_t add, yaml_mark_t m,
                    const char *alias) {
  yp->total += add;
  if (yp->total <= TOPO_YAML_MAX_EXPANDED) return 0;
  if (alias)
    return yp_err(yp, TS_ELIMIT, m,
                  "alias expansion exceeds %u nodes (at alias '*%.64s', "
                  "which expands to %llu nodes)",
                  TOPO_YAML_MAX_EXPANDED, alias, (unsigned long long)add);
  return yp_err(yp, TS_ELIMIT, m, "document exceeds %u nodes",
                TOPO_YAML_MAX_EXPANDED);
}

/* Defines anchor name (may be NULL: no anchor) for n, shadowing any earlier
 * anchor of that name as YAML requires. The anchor starts open. */
static int yp_anchor_def(yp_state *yp, const yaml_char_t *name, topo_ynode *n,
                         yp_anchor **out) {
  *out = NULL;
  if (!name) return 0;
  size_t len = strlen((const char *)name);
  yp_anchor *a = ya_alloc(yp->arena, sizeof *a);
  char *s = yp_strdup(yp, name, len);
  yh_slot *e;
  if (!a || !s || yh_put(&yp->hash, 0, s, (uint32_t)len, &e))
    return yp_nomem(yp);
  *a = (yp_anchor){n, 1, 1};
  e->val = a;
  *out = a;
  return 0;
}

/* 1 when the next child of the innermost open collection is a map key. */
static int yp_at_key(const yp_state *yp) {
  if (!yp->depth) return 0;
  const yp_frame *f = &yp->stack[yp->depth - 1];
  return f->node->kind == TOPO_Y_MAP && (yp->nkids - f->base) % 2 == 0;
}

static const char *yp_kind_name(topo_ykind k) {
  return k == TOPO_Y_MAP ? "mapping" : k == TOPO_Y_SEQ ? "sequence" : "scalar";
}

/* Checks key k (at mark m) of the innermost map: scalar and not seen yet in
 * that map. */
static int yp_key(yp_state *yp, topo_ynode *k, yaml_mark_t m) {
  if (k->kind != TOPO_Y_SCALAR)
    return yp_err(yp, TS_ESYNTAX, m, "mapping keys must be scalars, not a %s",
                  yp_kind_name(k->kind));
  yh_slot *e;
  if (yh_put(&yp->hash, yp->stack[yp->depth - 1].map_id, k->str, k->len, &e))
    return yp_nomem(yp);
  if (!e->val) {
    e->val = k;
    return 0;
  }
  const topo_ynode *first = e->val;
  return yp_err(yp, TS_ESYNTAX, m,
                "duplicate key '%.*s' (first at line %u, column %u)",
                (int)(k->len < 64 ? k->len : 64), k->str, first->line,
                first->col);
}

/* Appends n to the innermost open collection, or makes it the root. */
static int yp_add(yp_state *yp, topo_ynode *n) {
  if (!yp->depth) {
    yp->doc->root = n;
    return 0;
  }
  if (yp->nkids == yp->capkids) {
    size_t cap = yp->capkids ? 2 * yp->capkids : 256;
    topo_ynode **k = realloc(yp->kids, cap * sizeof *k);
    if (!k) return yp_nomem(yp);
    yp->kids = k;
    yp->capkids = cap;
  }
  yp->kids[yp->nkids++] = n;
  return 0;
}

static int yp_on_scalar(yp_state *yp, const yaml_event_t *ev) {
  yaml_mark_t m = ev->start_mark;
  size_t len = ev->data.scalar.length;
  yaml_scalar_style_t st = ev->data.scalar.style;
  topo_ynode *n = yp_node(yp, TOPO_Y_SCALAR, m);
  char *s = n ? yp_strdup(yp, ev->data.scalar.value, len) : NULL;
  if (!s) return yp_nomem(yp);
  n->str = s;
  n->len = (uint32_t)len;
  n->quoted = st != YAML_PLAIN_SCALAR_STYLE && st != YAML_ANY_SCALAR_STYLE;
  yp_anchor *a;
  int rc = yp_count(yp, 1, m, NULL);
  if (!rc) rc = yp_anchor_def(yp, ev->data.scalar.anchor, n, &a);
  if (!rc && a) a->open = 0;
  if (!rc && yp_at_key(yp)) rc = yp_key(yp, n, m);
  return rc ? rc : yp_add(yp, n);
}

static int yp_on_start(yp_state *yp, const yaml_event_t *ev, topo_ykind kind,
                       const yaml_char_t *anchor) {
  yaml_mark_t m = ev->start_mark;
  if (yp_at_key(yp))
    return yp_err(yp, TS_ESYNTAX, m, "mapping keys must be scalars, not a %s",
                  yp_kind_name(kind));
  if (yp->depth == TOPO_YAML_MAX_DEPTH)
    return yp_err(yp, TS_ELIMIT, m, "nesting deeper than %d levels",
                  TOPO_YAML_MAX_DEPTH);
  topo_ynode *n = yp_node(yp, kind, m);
  if (!n) return yp_nomem(yp);
  yp_frame *f = &yp->stack[yp->depth];
  *f = (yp_frame){n, NULL, yp->nkids, yp->total,
                  kind == TOPO_Y_MAP ? ++yp->maps : 0};
  int rc = yp_count(yp, 1, m, NULL);
  if (!rc) rc = yp_anchor_def(yp, anchor, n, &f->anchor);
  if (!rc) yp->depth++;
  return rc;
}

static int yp_on_end(yp_state *yp) {
  yp_frame *f = &yp->stack[--yp->depth];
  topo_ynode *n = f->node;
  size_t k = yp->nkids - f->base;
  if (k) {
    n->items = ya_alloc(yp->arena, k * sizeof *n->items);
    if (!n->items) return yp_nomem(yp);
    memcpy(n->items, yp->kids + f->base, k * sizeof *n->items);
  }
  n->count = (uint32_t)(n->kind == TOPO_Y_MAP ? k / 2 : k);
  yp->nkids = f->base;
  if (f->anchor) {
    f->anchor->size = yp->total - f->total0;
    f->anchor->open = 0;
  }
  return yp_add(yp, n);
}

static int yp_on_alias(yp_state *yp, const yaml_event_t *ev) {
  const char *name = (const char *)ev->data.alias.anchor;
  yaml_mark_t m = ev->start_mark;
  yp_anchor *a = yh_get(&yp->hash, 0, name);
  if (!a) return yp_err(yp, TS_ESYNTAX, m, "undefined alias '*%.64s'", name);
  if (a->open)
    return yp_err(yp, TS_ESYNTAX, m,
                  "alias '*%.64s' refers to an enclosing node (cycle)", name);
  int rc = yp_count(yp, a->size, m, name);
  if (!rc && yp_at_key(yp)) rc = yp_key(yp, a->node, m);
  return rc ? rc : yp_add(yp, a->node);
}

static int yp_on_event(yp_state *yp, const yaml_event_t *ev) {
  switch (ev->type) {
  case YAML_DOCUMENT_START_EVENT:
    if (yp->docs++)
      return yp_err(yp, TS_ESYNTAX, ev->start_mark,
                    "only one YAML document is allowed");
    return 0;
  case YAML_SCALAR_EVENT: return yp_on_scalar(yp, ev);
  case YAML_ALIAS_EVENT: return yp_on_alias(yp, ev);
  case YAML_SEQUENCE_START_EVENT:
    return yp_on_start(yp, ev, TOPO_Y_SEQ, ev->data.sequence_start.anchor);
  case YAML_MAPPING_START_EVENT:
    return yp_on_start(yp, ev, TOPO_Y_MAP, ev->data.mapping_start.anchor);
  case YAML_SEQUENCE_END_EVENT:
  case YAML_MAPPING_END_EVENT: return yp_on_end(yp);
  default: return 0; /* stream start/end, document end */
  }
}

/* Pulls events to the end of the stream; each event is freed at once. */
static int yp_run(yp_state *yp) {
  for (;;) {
    yaml_event_t ev;
    if (!yaml_parser_parse(&yp->parser, &ev)) return yp_libyaml_error(yp);
    int rc = yp_on_event(yp, &ev);
    int end = ev.type == YAML_STREAM_END_EVENT;
    yaml_event_delete(&ev);
    if (rc || end) return rc;
  }
}

/* An empty stream, or a document that is only "---" (a plain empty root). */
static int yp_is_empty(const topo_ynode *root) {
  return !root || (root->kind == TOPO_Y_SCALAR && !root->quoted &&
                   root->len == 0);
}

/* Runs libyaml over yp->buf and builds yp->doc->root; frees all parse-time
 * state (parser, scratch vector, hash) whatever the outcome. */
static int yp_parse(yp_state *yp) {
  if (!yaml_parser_initialize(&yp->parser)) return yp_nomem(yp);
  yaml_parser_set_encoding(&yp->parser, YAML_UTF8_ENCODING);
  yaml_parser_set_input_string(&yp->parser, (const unsigned char *)yp->buf,
                               yp->len);
  int rc = yp_run(yp);
  if (!rc && yp_is_empty(yp->doc->root))
    rc = ts_diag_set(yp->d, TS_ENOINPUT, yp->doc->file, 0, 0,
                     "empty document");
  yaml_parser_delete(&yp->parser);
  free(yp->kids);
  free(yp->hash.v);
  return rc;
}

/* ---- public API ------------------------------------------------------- */

static topo_ydoc *yp_doc_new(const char *file) {
  ya_doc *yd = calloc(1, sizeof *yd);
  if (!yd) return NULL;
  size_t len = strlen(file);
  char *f = ya_alloc(&yd->arena, len + 1);
  if (!f) {
    free(yd);
    return NULL;
  }
  memcpy(f, file, len + 1);
  yd->pub.file = f;
  yd->pub.arena = &yd->arena;
  return &yd->pub;
}

int topo_yaml_parse(const char *buf, size_t len, const char *file,
                    topo_ydoc **out, ts_diag *d) {
  *out = NULL;
  if (!file) file = "<input>";
  if (len > TOPO_YAML_MAX_BYTES)
    return ts_diag_set(d, TS_ELIMIT, file, 0, 0,
                       "input is %zu bytes; the limit is %u bytes", len,
                       TOPO_YAML_MAX_BYTES);
  topo_ydoc *doc = yp_doc_new(file);
  if (!doc) return ts_diag_set(d, TS_ENOMEM, file, 0, 0, "out of memory");
  /* libyaml skips a BOM only when it detects the encoding, and detecting
   * would also admit UTF-16: pin UTF-8 and skip a UTF-8 BOM here. */
  size_t bom = buf && len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
  size_t lead = bom;
  while (buf && lead < len && strchr(" \t\r\n", buf[lead])) lead++;
  if (buf && lead < len && buf[lead] == '<') {
    int line = 1, col = 1;
    for (size_t i = bom; i < lead; i++, col++)
      if (buf[i] == '\n') line++, col = 0;
    topo_ydoc_free(doc);
    return ts_diag_set(d, TS_ESYNTAX, file, line, col, "this is XML, not YAML: "
                       "an NCCL topology dump (<system>) is read by `topsim topo "
                       "FILE.xml` or a template's `nccl_topo: FILE.xml`");
  }
  yp_state yp = {.arena = doc->arena, .doc = doc, .d = d,
                 .buf = buf ? buf + bom : "", .len = len - bom,
                 .skipped = bom};
  int rc = yp_parse(&yp);
  if (rc) {
    topo_ydoc_free(doc);
    return rc;
  }
  *out = doc;
  return 0;
}

/* Grows the read buffer: the file size first (plus one byte to see EOF in a
 * single pass), then doubling, never past the limit plus one. */
static char *yp_grow(char *b, size_t *cap, size_t hint) {
  size_t c = *cap ? 2 * *cap : hint + 1;
  if (c < 4096) c = 4096;
  if (c > (size_t)TOPO_YAML_MAX_BYTES + 1) c = (size_t)TOPO_YAML_MAX_BYTES + 1;
  char *nb = realloc(b, c);
  if (nb) *cap = c;
  return nb;
}

/* Reads fd to EOF into a malloc'd buffer. Refuses more than the limit even
 * when fstat could not tell (pipes) or the file grew after it. */
static int yp_read_fd(int fd, const char *path, size_t hint, char **out,
                      size_t *len, ts_diag *d) {
  char *b = NULL;
  size_t n = 0, cap = 0;
  int rc = 0;
  while (!rc) {
    char *nb = n == cap ? yp_grow(b, &cap, hint) : b;
    if (!nb) {
      rc = ts_diag_set(d, TS_ENOMEM, path, 0, 0, "out of memory");
      break;
    }
    b = nb;
    ssize_t r = read(fd, b + n, cap - n);
    if (r == 0) break;
    if (r < 0 && errno == EINTR) continue;
    if (r < 0)
      rc = ts_diag_set(d, TS_ENOINPUT, path, 0, 0, "cannot read: %s",
                       strerror(errno));
    else if ((n += (size_t)r) > TOPO_YAML_MAX_BYTES)
      rc = ts_diag_set(d, TS_ELIMIT, path, 0, 0,
                       "input exceeds the limit of %u bytes",
                       TOPO_YAML_MAX_BYTES);
  }
  if (rc) {
    free(b);
    return rc;
  }
  *out = b;
  *len = n;
  return 0;
}

/* Opens path and checks its size with fstat before reading a byte. */
static int yp_read_file(const char *path, char **buf, size_t *len,
                        ts_diag *d) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return ts_diag_set(d, TS_ENOINPUT, path, 0, 0, "cannot open: %s",
                       strerror(errno));
  struct stat st;
  int rc;
  if (fstat(fd, &st))
    rc = ts_diag_set(d, TS_ENOINPUT, path, 0, 0, "cannot stat: %s",
                     strerror(errno));
  else if (S_ISREG(st.st_mode) && (uintmax_t)st.st_size > TOPO_YAML_MAX_BYTES)
    rc = ts_diag_set(d, TS_ELIMIT, path, 0, 0,
                     "file is %jd bytes; the limit is %u bytes",
                     (intmax_t)st.st_size, TOPO_YAML_MAX_BYTES);
  else
    rc = yp_read_fd(fd, path, S_ISREG(st.st_mode) ? (size_t)st.st_size : 0,
                    buf, len, d);
  close(fd);
  return rc;
}

int topo_yaml_load_file(const char *path, topo_ydoc **out, ts_diag *d) {
  *out = NULL;
  char *buf = NULL;
  size_t len = 0;
  int rc = yp_read_file(path, &buf, &len, d);
  if (!rc) rc = topo_yaml_parse(buf, len, path, out, d);
  free(buf);
  return rc;
}

void topo_ydoc_free(topo_ydoc *doc) {
  if (!doc) return;
  ya_free_all(doc->arena);
  free((ya_doc *)doc); /* pub is the first member */
}

/* Linear scan: topology maps have a handful of keys, and a scan over the
 * items array beats building an index per map. If some map grows large,
 * sort its keys once after parsing and binary-search here. */
const topo_ynode *topo_ymap_get(const topo_ynode *map, const char *key) {
  if (!map || map->kind != TOPO_Y_MAP || !key) return NULL;
  size_t len = strlen(key);
  for (uint32_t i = 0; i < map->count; i++) {
    const topo_ynode *k = map->items[2 * i];
    if (k->len == len && memcmp(k->str, key, len) == 0)
      return map->items[2 * i + 1];
  }
  return NULL;
}
