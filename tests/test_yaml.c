/* test_yaml.c - the hardened YAML reader (src/topo/topo_yaml.c).
 *
 * Every rejection is checked for its code, its exact position and its
 * message; accepted documents are checked node by node. The last test runs
 * the YAML-level part of tests/data/bad through topo_yaml_load_file and
 * checks it against tests/data/bad/EXPECT. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "topo/topo_yaml.h"

/* Parses text (NUL-terminated); fails the test unless it loads. */
static topo_ydoc *parse_ok(const char *text) {
  topo_ydoc *doc = NULL;
  ts_diag d;
  ts_diag_clear(&d);
  int rc = topo_yaml_parse(text, strlen(text), "t.yaml", &doc, &d);
  if (rc) print_error("%d:%d: %s\n", d.line, d.col, d.msg);
  assert_int_equal(rc, 0);
  assert_non_null(doc);
  assert_non_null(doc->root);
  return doc;
}

/* Parses len bytes expecting failure code at line:col with msg inside the
 * message. Also checks that *out stays NULL. */
static void parse_fails(const char *buf, size_t len, int code, int line,
                        int col, const char *msg) {
  topo_ydoc *doc = (topo_ydoc *)1;
  ts_diag d;
  ts_diag_clear(&d);
  int rc = topo_yaml_parse(buf, len, "t.yaml", &doc, &d);
  if (rc != code || !strstr(d.msg, msg))
    print_error("rc %d at %d:%d: %s\n", rc, d.line, d.col, d.msg);
  assert_int_equal(rc, code);
  assert_null(doc);
  assert_string_equal(d.file, "t.yaml");
  assert_int_equal(d.line, line);
  assert_int_equal(d.col, col);
  assert_non_null(strstr(d.msg, msg));
}

static void fails(const char *text, int code, int line, int col,
                  const char *msg) {
  parse_fails(text, strlen(text), code, line, col, msg);
}

static void assert_scalar(const topo_ynode *n, const char *s, int quoted,
                          uint32_t line, uint32_t col) {
  assert_non_null(n);
  assert_int_equal(n->kind, TOPO_Y_SCALAR);
  assert_string_equal(n->str, s);
  assert_int_equal(n->len, strlen(s));
  assert_int_equal(n->quoted, quoted);
  assert_int_equal(n->count, 0);
  assert_int_equal(n->line, line);
  assert_int_equal(n->col, col);
}

/* Text of n nested flow sequences: "[[...]]". */
static char *nested(int n) {
  char *s = malloc(2 * (size_t)n + 1);
  assert_non_null(s);
  memset(s, '[', (size_t)n);
  memset(s + n, ']', (size_t)n);
  s[2 * n] = '\0';
  return s;
}

/* ---- accepted documents ---------------------------------------------- */

static void test_tree_shape_and_positions(void **state) {
  (void)state;
  topo_ydoc *doc = parse_ok("topsim: 1\n"
                            "name: dgx\n"
                            "gpus:\n"
                            "  - id: 0\n"
                            "    peers: [1, 2]\n"
                            "  - {id: 1}\n"
                            "empty: {}\n");
  const topo_ynode *r = doc->root;
  assert_string_equal(doc->file, "t.yaml");
  assert_int_equal(r->kind, TOPO_Y_MAP);
  assert_int_equal(r->count, 4);
  assert_int_equal(r->line, 1);
  assert_int_equal(r->col, 1);
  assert_null(r->str);
  assert_scalar(r->items[0], "topsim", 0, 1, 1);
  assert_scalar(topo_ymap_get(r, "topsim"), "1", 0, 1, 9);
  assert_scalar(r->items[2], "name", 0, 2, 1);
  assert_scalar(topo_ymap_get(r, "name"), "dgx", 0, 2, 7);

  const topo_ynode *gpus = topo_ymap_get(r, "gpus");
  assert_int_equal(gpus->kind, TOPO_Y_SEQ);
  assert_int_equal(gpus->count, 2);
  assert_int_equal(gpus->line, 4); /* a block sequence starts at its '-' */
  assert_int_equal(gpus->col, 3);
  const topo_ynode *g0 = gpus->items[0];
  assert_int_equal(g0->kind, TOPO_Y_MAP);
  assert_int_equal(g0->count, 2);
  assert_int_equal(g0->line, 4);
  assert_int_equal(g0->col, 5);
  assert_scalar(topo_ymap_get(g0, "id"), "0", 0, 4, 9);
  const topo_ynode *peers = topo_ymap_get(g0, "peers");
  assert_int_equal(peers->kind, TOPO_Y_SEQ);
  assert_int_equal(peers->count, 2);
  assert_int_equal(peers->line, 5);
  assert_int_equal(peers->col, 12);
  assert_scalar(peers->items[1], "2", 0, 5, 16);
  const topo_ynode *g1 = gpus->items[1];
  assert_int_equal(g1->kind, TOPO_Y_MAP);
  assert_int_equal(g1->line, 6);
  assert_int_equal(g1->col, 5);
  assert_scalar(topo_ymap_get(g1, "id"), "1", 0, 6, 10);

  const topo_ynode *empty = topo_ymap_get(r, "empty");
  assert_int_equal(empty->kind, TOPO_Y_MAP);
  assert_int_equal(empty->count, 0);
  assert_null(empty->items);
  topo_ydoc_free(doc);
}

/* The schema layer must tell "123" from 123: quotes and block styles set
 * quoted; an empty value is a plain empty scalar. */
static void test_quoted_vs_plain(void **state) {
  (void)state;
  topo_ydoc *doc = parse_ok("a: 123\n"
                            "b: \"123\"\n"
                            "c: '123'\n"
                            "d: |\n"
                            "  123\n"
                            "e: >\n"
                            "  1 2\n"
                            "f:\n"
                            "g: \"a\\0b\"\n");
  const topo_ynode *r = doc->root;
  assert_scalar(topo_ymap_get(r, "a"), "123", 0, 1, 4);
  assert_scalar(topo_ymap_get(r, "b"), "123", 1, 2, 4);
  assert_scalar(topo_ymap_get(r, "c"), "123", 1, 3, 4);
  assert_scalar(topo_ymap_get(r, "d"), "123\n", 1, 4, 4);
  assert_scalar(topo_ymap_get(r, "e"), "1 2\n", 1, 6, 4);
  const topo_ynode *f = topo_ymap_get(r, "f");
  assert_int_equal(f->kind, TOPO_Y_SCALAR);
  assert_int_equal(f->len, 0);
  assert_int_equal(f->quoted, 0);
  /* An escaped NUL is data: len counts past it. */
  const topo_ynode *g = topo_ymap_get(r, "g");
  assert_int_equal(g->len, 3);
  assert_memory_equal(g->str, "a\0b", 4);
  topo_ydoc_free(doc);
}

static void test_map_get(void **state) {
  (void)state;
  topo_ydoc *doc = parse_ok("k: [x]\nkk: 2\n\"\": 3\n");
  const topo_ynode *r = doc->root;
  assert_null(topo_ymap_get(r, "missing"));
  assert_null(topo_ymap_get(r, "kkk"));
  assert_scalar(topo_ymap_get(r, "kk"), "2", 0, 2, 5);
  assert_scalar(topo_ymap_get(r, ""), "3", 0, 3, 5);
  assert_null(topo_ymap_get(topo_ymap_get(r, "k"), "x")); /* not a map */
  assert_null(topo_ymap_get(NULL, "k"));
  topo_ydoc_free(doc);
  topo_ydoc_free(NULL);
}

/* Same key in different maps, and keys equal to values, are fine. */
static void test_same_key_in_different_maps(void **state) {
  (void)state;
  topo_ydoc *doc = parse_ok("a: {id: 1}\nb: {id: 2}\nid: id\n");
  assert_int_equal(doc->root->count, 3);
  assert_scalar(topo_ymap_get(topo_ymap_get(doc->root, "b"), "id"), "2", 0,
                2, 9);
  topo_ydoc_free(doc);
}

/* Aliases share the anchored node; no copy is made. */
static void test_alias_shares_subtree(void **state) {
  (void)state;
  topo_ydoc *doc = parse_ok("base: &b {bw: 900, lat: 1}\n"
                            "x: *b\n"
                            "y: [*b, *b]\n"
                            "n: &n 7\n"
                            "m: *n\n"
                            "*n : seven\n");
  const topo_ynode *r = doc->root;
  const topo_ynode *base = topo_ymap_get(r, "base");
  assert_int_equal(base->kind, TOPO_Y_MAP);
  assert_int_equal(base->count, 2);
  assert_ptr_equal(topo_ymap_get(r, "x"), base);
  const topo_ynode *y = topo_ymap_get(r, "y");
  assert_ptr_equal(y->items[0], base);
  assert_ptr_equal(y->items[1], base);
  assert_ptr_equal(topo_ymap_get(r, "m"), topo_ymap_get(r, "n"));
  /* An alias to a scalar may be a key. */
  assert_scalar(topo_ymap_get(r, "7"), "seven", 0, 6, 6);
  topo_ydoc_free(doc);
}

/* A later anchor of the same name shadows the earlier one. */
static void test_anchor_redefinition(void **state) {
  (void)state;
  topo_ydoc *doc = parse_ok("a: &v 1\nb: &v 2\nc: *v\n");
  assert_scalar(topo_ymap_get(doc->root, "c"), "2", 0, 2, 4); /* at "&v" */
  topo_ydoc_free(doc);
}

/* Budget boundary. Root seq (1 node) holds &a, a seq of 999 scalars
 * (1000 nodes), then k aliases to it (1000 each) and m scalars:
 * total = 1 + 1000 + 1000k + m. k = 998, m = 999 gives exactly 1,000,000
 * = TOPO_YAML_MAX_EXPANDED, which loads; one more scalar does not. */
static char *budget_doc(int extra) {
  size_t cap = 16 * 4000, n = 0;
  char *s = malloc(cap);
  assert_non_null(s);
  n += (size_t)snprintf(s + n, cap - n, "[&a [");
  for (int i = 0; i < 999; i++) n += (size_t)snprintf(s + n, cap - n, "x,");
  n += (size_t)snprintf(s + n, cap - n, "]");
  for (int i = 0; i < 998; i++) n += (size_t)snprintf(s + n, cap - n, ",*a");
  for (int i = 0; i < 999 + extra; i++)
    n += (size_t)snprintf(s + n, cap - n, ",y");
  snprintf(s + n, cap - n, "]\n");
  return s;
}

static void test_alias_budget_boundary(void **state) {
  (void)state;
  char *text = budget_doc(0);
  topo_ydoc *doc = parse_ok(text);
  assert_int_equal(doc->root->count, 1 + 998 + 999);
  assert_ptr_equal(doc->root->items[1], doc->root->items[998]);
  topo_ydoc_free(doc);
  free(text);
  text = budget_doc(1);
  /* "[&a [" + 999 "x," + "]" is 2004 columns, 998 ",*a" 2994 more; the
   * m-th ",y" puts y at column 4998 + 2m, and m = 1000 is the one over. */
  fails(text, TS_ELIMIT, 1, 6998, "document exceeds 1000000 nodes");
  free(text);
}

/* Depth counts open collections; the root is depth 1. 64 is the limit. */
static void test_depth_boundary(void **state) {
  (void)state;
  char *ok = nested(TOPO_YAML_MAX_DEPTH);
  topo_ydoc *doc = parse_ok(ok);
  const topo_ynode *n = doc->root;
  int depth = 1;
  while (n->count) n = n->items[0], depth++;
  assert_int_equal(depth, TOPO_YAML_MAX_DEPTH);
  assert_int_equal(n->col, TOPO_YAML_MAX_DEPTH);
  topo_ydoc_free(doc);
  free(ok);
  char *deep = nested(TOPO_YAML_MAX_DEPTH + 1);
  fails(deep, TS_ELIMIT, 1, TOPO_YAML_MAX_DEPTH + 1,
        "nesting deeper than 64 levels");
  free(deep);
  /* Block style counts the same way: map in map ... 65 deep. */
  char block[65 * 70];
  size_t len = 0;
  for (int i = 0; i < 65; i++)
    len += (size_t)snprintf(block + len, sizeof block - len, "%*sk:\n",
                            2 * i, "");
  fails(block, TS_ELIMIT, 65, 129, "nesting deeper than 64 levels");
}

/* ---- rejected documents ---------------------------------------------- */

static void test_duplicate_keys(void **state) {
  (void)state;
  fails("topsim: 1\nname: x\ngpus: 8\nnet:\n  a: 1\ngpus: 2\n", TS_ESYNTAX, 6,
        1, "duplicate key 'gpus' (first at line 3, column 1)");
  fails("nodes:\n  gpu0:\n    gpus: 1\n    kind: gpu\n    gpus: 2\n",
        TS_ESYNTAX, 5, 5, "duplicate key 'gpus' (first at line 3, column 5)");
  fails("{a: 1, b: 2, a: 3}", TS_ESYNTAX, 1, 14,
        "duplicate key 'a' (first at line 1, column 2)");
  /* Quoting does not make a different key. */
  fails("a: 1\n\"a\": 2\n", TS_ESYNTAX, 2, 1,
        "duplicate key 'a' (first at line 1, column 1)");
  /* Nor does reaching it through an alias. */
  fails("&k a: 1\n*k : 2\n", TS_ESYNTAX, 2, 1,
        "duplicate key 'a' (first at line 1, column 1)"); /* at "&k" */
}

/* Billion laughs: level i is 9 aliases of level i-1, 9^9 nodes if copied. */
static void test_alias_bomb(void **state) {
  (void)state;
  char text[2048];
  size_t n = (size_t)snprintf(text, sizeof text,
                              "a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n");
  for (char c = 'b'; c <= 'i'; c++) {
    n += (size_t)snprintf(text + n, sizeof text - n, "%c: &%c [", c, c);
    for (int i = 0; i < 9; i++)
      n += (size_t)snprintf(text + n, sizeof text - n, "%s*%c", i ? "," : "",
                            c - 1);
    n += (size_t)snprintf(text + n, sizeof text - n, "]\n");
  }
  /* Expanded sizes: a 10, b 1+9*10 = 91, c 820, d 7381, e 66430,
   * f 597871. After f the total is 1 (root) + 6 keys + 672603 = 672610;
   * key g and its seq make 672612 and g's first *f makes 1270483 > 10^6. */
  fails(text, TS_ELIMIT, 7, 8, "alias expansion exceeds 1000000 nodes");
  fails(text, TS_ELIMIT, 7, 8, "'*f', which expands to 597871 nodes");
}

static void test_alias_cycle_and_undefined(void **state) {
  (void)state;
  fails("a: &a\n  b: *a\n", TS_ESYNTAX, 2, 6,
        "alias '*a' refers to an enclosing node (cycle)");
  fails("&s [1, [2, *s]]", TS_ESYNTAX, 1, 12,
        "alias '*s' refers to an enclosing node (cycle)");
  fails("a: *nope\n", TS_ESYNTAX, 1, 4, "undefined alias '*nope'");
  /* Anchors are only visible after their definition. */
  fails("a: *b\nb: &b 1\n", TS_ESYNTAX, 1, 4, "undefined alias '*b'");
}

static void test_non_scalar_keys(void **state) {
  (void)state;
  fails("? [a, b]\n: 1\n", TS_ESYNTAX, 1, 3,
        "mapping keys must be scalars, not a sequence");
  fails("{{a: 1}: 2}", TS_ESYNTAX, 1, 2,
        "mapping keys must be scalars, not a mapping");
  fails("s: &s [1]\n*s : 2\n", TS_ESYNTAX, 2, 1,
        "mapping keys must be scalars, not a sequence");
}

static void test_empty_inputs(void **state) {
  (void)state;
  fails("", TS_ENOINPUT, 0, 0, "empty document");
  parse_fails(NULL, 0, TS_ENOINPUT, 0, 0, "empty document");
  fails("   \n\n  \n", TS_ENOINPUT, 0, 0, "empty document");
  fails("# only\n  # comments\n", TS_ENOINPUT, 0, 0, "empty document");
  fails("---\n# nothing\n", TS_ENOINPUT, 0, 0, "empty document");
  fails("---\n...\n", TS_ENOINPUT, 0, 0, "empty document");
}

static void test_two_documents(void **state) {
  (void)state;
  fails("topsim: 1\n---\nname: x\n", TS_ESYNTAX, 2, 1,
        "only one YAML document is allowed");
  fails("a: 1\n...\n---\nb: 2\n", TS_ESYNTAX, 3, 1,
        "only one YAML document is allowed");
}

/* libyaml's reader rejects bytes that are not UTF-8 text; the position is
 * computed from its byte offset. */
static void test_binary_input(void **state) {
  (void)state;
  const char bin[] = "topsim: 1\nname: \x01\x02\xff";
  parse_fails(bin, sizeof bin - 1, TS_ESYNTAX, 2, 7,
              "binary or non-UTF-8 input: control characters are not "
              "allowed (byte 0x01 at offset 16)");
  const char nul[] = "topsim: 1\nname: a\0b\n";
  parse_fails(nul, sizeof nul - 1, TS_ESYNTAX, 2, 8,
              "(byte 0x00 at offset 17)");
  const char latin1[] = "name: caf\xe9 au lait\n";
  /* libyaml blames the byte that cannot continue the sequence. */
  parse_fails(latin1, sizeof latin1 - 1, TS_ESYNTAX, 1, 11,
              "invalid trailing UTF-8 octet (byte 0x20 at offset 10)");
  /* Columns count characters: "é" is one column. */
  const char after_utf8[] = "n\xc3\xa9: \xff\n";
  parse_fails(after_utf8, sizeof after_utf8 - 1, TS_ESYNTAX, 1, 5,
              "invalid leading UTF-8 octet (byte 0xFF at offset 5)");
  /* CRLF is one line break, as libyaml counts it. */
  const char crlf[] = "a: 1\r\nb: \xff\n";
  parse_fails(crlf, sizeof crlf - 1, TS_ESYNTAX, 2, 4, "offset 9)");
  /* Offsets count a skipped BOM; columns do not. */
  const char bom[] = "\xef\xbb\xbf" "a: \xff\n";
  parse_fails(bom, sizeof bom - 1, TS_ESYNTAX, 1, 4, "offset 6)");
  const char utf16[] = "\xff\xfe" "a\0:\0 \0" "1\0";
  parse_fails(utf16, sizeof utf16 - 1, TS_ESYNTAX, 1, 1, "non-UTF-8");
}

static void test_libyaml_syntax_errors(void **state) {
  (void)state;
  fails("a: b: c\n", TS_ESYNTAX, 1, 5,
        "mapping values are not allowed in this context");
  fails("gpus: [0, 1\nlinks: []\n", TS_ESYNTAX, 2, 6,
        "did not find expected ',' or ']' (while parsing a flow sequence "
        "started at line 1, column 7)");
  fails("a:\n\tb: 1\n", TS_ESYNTAX, 2, 1,
        "tabs cannot be used for indentation");
  fails("a: \"open\n", TS_ESYNTAX, 2, 1,
        "found unexpected end of stream (while scanning a quoted scalar "
        "started at line 1, column 4)");
}

/* The cap applies to the length given, before libyaml sees a byte. */
static void test_size_cap(void **state) {
  (void)state;
  size_t n = (size_t)TOPO_YAML_MAX_BYTES + 1;
  char *big = malloc(n);
  assert_non_null(big);
  memset(big, ' ', n);
  parse_fails(big, n, TS_ELIMIT, 0, 0, "the limit is 67108864 bytes");
  free(big);
}

/* A sparse file one byte over the cap is refused from fstat alone. */
static void test_load_file_size_cap(void **state) {
  (void)state;
  char path[] = "/tmp/topsim_yaml_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(ftruncate(fd, (off_t)TOPO_YAML_MAX_BYTES + 1), 0);
  close(fd);
  topo_ydoc *doc = (topo_ydoc *)1;
  ts_diag d;
  ts_diag_clear(&d);
  assert_int_equal(topo_yaml_load_file(path, &doc, &d), TS_ELIMIT);
  assert_null(doc);
  assert_string_equal(d.file, path);
  assert_non_null(strstr(d.msg, "file is 67108865 bytes"));
  unlink(path);
}

static void test_load_file_errors(void **state) {
  (void)state;
  topo_ydoc *doc = (topo_ydoc *)1;
  ts_diag d;
  ts_diag_clear(&d);
  assert_int_equal(topo_yaml_load_file("/nonexistent/x.yaml", &doc, &d),
                   TS_ENOINPUT);
  assert_null(doc);
  assert_string_equal(d.msg, "cannot open: No such file or directory");
  ts_diag_clear(&d);
  assert_int_equal(topo_yaml_load_file(tu_path("tests/data"), &doc, &d),
                   TS_ENOINPUT);
  assert_string_equal(d.msg, "cannot read: Is a directory");
}

static void test_load_file_ok(void **state) {
  (void)state;
  char path[] = "/tmp/topsim_yaml_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  const char text[] = "\xef\xbb\xbftopsim: 1\nname: x\n"; /* with a BOM */
  assert_int_equal(write(fd, text, sizeof text - 1), (ssize_t)sizeof text - 1);
  close(fd);
  topo_ydoc *doc = NULL;
  ts_diag d;
  assert_int_equal(topo_yaml_load_file(path, &doc, &d), 0);
  assert_string_equal(doc->file, path);
  assert_scalar(topo_ymap_get(doc->root, "name"), "x", 0, 2, 7);
  topo_ydoc_free(doc);
  unlink(path);
}

/* ---- the bad-input corpus -------------------------------------------- */

static const struct {
  const char *file;
  int code;
} corpus[] = {
    {"syntax_error.yaml", TS_ESYNTAX},
    {"unclosed_flow.yaml", TS_ESYNTAX},
    {"bad_indent.yaml", TS_ESYNTAX},
    {"tab_indent.yaml", TS_ESYNTAX},
    {"duplicate_key.yaml", TS_ESYNTAX},
    {"duplicate_key_nested.yaml", TS_ESYNTAX},
    {"alias_bomb.yaml", TS_ELIMIT},
    {"alias_cycle.yaml", TS_ESYNTAX},
    {"undefined_alias.yaml", TS_ESYNTAX},
    {"deep_nesting.yaml", TS_ELIMIT},
    {"empty.yaml", TS_ENOINPUT},
    {"comments_only.yaml", TS_ENOINPUT},
    {"binary_garbage.yaml", TS_ESYNTAX},
    {"two_documents.yaml", TS_ESYNTAX},
    {"complex_key.yaml", TS_ESYNTAX},
    {"invalid_utf8.yaml", TS_ESYNTAX},
    {"nul_byte.yaml", TS_ESYNTAX},
};

/* Finds file's line in EXPECT: "<file>\t<status>\t<substring>". */
static int expect_line(const char *file, int *status, char *sub, size_t cap) {
  FILE *f = fopen(tu_path("tests/data/bad/EXPECT"), "r");
  assert_non_null(f);
  char line[1024], name[256];
  int found = 0;
  while (!found && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
    if (!t2) continue;
    snprintf(name, sizeof name, "%.*s", (int)(t1 - line), line);
    if (strcmp(name, file)) continue;
    *status = atoi(t1 + 1);
    snprintf(sub, cap, "%s", t2 + 1);
    found = 1;
  }
  fclose(f);
  return found;
}

static void test_bad_corpus(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof corpus / sizeof corpus[0]; i++) {
    char rel[256], sub[512];
    int status = -1;
    snprintf(rel, sizeof rel, "tests/data/bad/%s", corpus[i].file);
    if (!expect_line(corpus[i].file, &status, sub, sizeof sub))
      fail_msg("%s has no EXPECT line", corpus[i].file);
    topo_ydoc *doc = (topo_ydoc *)1;
    ts_diag d;
    ts_diag_clear(&d);
    int rc = topo_yaml_load_file(tu_path(rel), &doc, &d);
    if (rc != corpus[i].code || !strstr(d.msg, sub))
      fail_msg("%s: rc %d, message '%s', expected '%s'", corpus[i].file, rc,
               d.msg, sub);
    assert_null(doc);
    assert_int_equal(ts_exit_status(rc), status);
    if (rc == TS_ENOINPUT) {
      assert_int_equal(d.line, 0);
    } else {
      assert_true(d.line > 0);
      assert_true(d.col > 0);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tree_shape_and_positions),
      cmocka_unit_test(test_quoted_vs_plain),
      cmocka_unit_test(test_map_get),
      cmocka_unit_test(test_same_key_in_different_maps),
      cmocka_unit_test(test_alias_shares_subtree),
      cmocka_unit_test(test_anchor_redefinition),
      cmocka_unit_test(test_alias_budget_boundary),
      cmocka_unit_test(test_depth_boundary),
      cmocka_unit_test(test_duplicate_keys),
      cmocka_unit_test(test_alias_bomb),
      cmocka_unit_test(test_alias_cycle_and_undefined),
      cmocka_unit_test(test_non_scalar_keys),
      cmocka_unit_test(test_empty_inputs),
      cmocka_unit_test(test_two_documents),
      cmocka_unit_test(test_binary_input),
      cmocka_unit_test(test_libyaml_syntax_errors),
      cmocka_unit_test(test_size_cap),
      cmocka_unit_test(test_load_file_size_cap),
      cmocka_unit_test(test_load_file_errors),
      cmocka_unit_test(test_load_file_ok),
      cmocka_unit_test(test_bad_corpus),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
