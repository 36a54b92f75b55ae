/* topo_yaml.h - a hardened YAML reader producing a small read-only tree.
 *
 * libyaml alone accepts duplicate mapping keys, alias cycles and alias bombs
 * ("billion laughs"). This layer turns libyaml's event stream into a tree and
 * rejects, with file:line:column:
 *   - input over TOPO_YAML_MAX_BYTES (checked before parsing) or empty input;
 *   - nesting deeper than TOPO_YAML_MAX_DEPTH;
 *   - duplicate keys in one mapping (message names both positions);
 *   - aliases whose total expanded size would exceed TOPO_YAML_MAX_EXPANDED
 *     nodes (aliases share the anchored subtree, so memory stays linear; the
 *     budget bounds the work of walking the tree), aliases to an anchor that
 *     is still open (a cycle) and undefined aliases;
 *   - non-scalar mapping keys, multiple documents, binary (non UTF-8) input.
 * All nodes live in one arena freed by topo_ydoc_free. Cost: O(input) time
 * and memory. */
#ifndef TOPSIM_TOPO_YAML_H
#define TOPSIM_TOPO_YAML_H

#include <stddef.h>
#include <stdint.h>

#include "topsim/ts_error.h"

#define TOPO_YAML_MAX_BYTES (64u << 20)
#define TOPO_YAML_MAX_DEPTH 64
#define TOPO_YAML_MAX_EXPANDED 1000000u

typedef enum topo_ykind { TOPO_Y_SCALAR, TOPO_Y_MAP, TOPO_Y_SEQ } topo_ykind;

typedef struct topo_ynode topo_ynode;
struct topo_ynode {
  topo_ykind kind;
  uint32_t line, col;    /* 1-based position of the node's first token */
  const char *str;       /* scalar: NUL-terminated value; else NULL */
  uint32_t len;          /* scalar: byte length of str */
  int quoted;            /* scalar: written in quotes or as a block */
  uint32_t count;        /* map: pairs; seq: items; scalar: 0 */
  topo_ynode **items;    /* seq: items[i]; map: keys at 2i, values at 2i+1 */
};

typedef struct topo_ydoc {
  topo_ynode *root;      /* NULL never: an empty document is an error */
  const char *file;      /* name used in diagnostics (owned by the doc) */
  void *arena;           /* private */
} topo_ydoc;

/* Parses buf. On success *out is a document to free with topo_ydoc_free.
 * On failure returns TS_ESYNTAX, TS_ELIMIT, TS_ENOINPUT (empty) or
 * TS_ENOMEM, sets *out = NULL and fills d with file:line:column. */
int topo_yaml_parse(const char *buf, size_t len, const char *file,
                    topo_ydoc **out, ts_diag *d);

/* Reads path (refusing files over TOPO_YAML_MAX_BYTES without reading them)
 * and parses it. TS_ENOINPUT if it cannot be opened or is empty. */
int topo_yaml_load_file(const char *path, topo_ydoc **out, ts_diag *d);

/* Frees the document and every node (NULL is fine). */
void topo_ydoc_free(topo_ydoc *doc);

/* Value of key in a mapping node, or NULL if absent or map is not a map. */
const topo_ynode *topo_ymap_get(const topo_ynode *map, const char *key);

#endif
