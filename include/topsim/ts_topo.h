/* ts_topo.h - the topology graph: loading, inspection, validation.
 *
 * A topology is a flat array of nodes (GPUs, CPUs, PCIe switches, NVSwitches,
 * NICs, network switches) and a flat array of full-duplex links. Each link
 * has two directions, each its own resource: direction 2*l goes a->b and
 * 2*l+1 goes b->a. Adjacency is CSR: the directions leaving node n are
 * ts_topo_adj(t, n)[0 .. ts_topo_degree(t, n)). Everything is freed together
 * by ts_topo_free. There are no all-pairs tables anywhere: memory is
 * O(nodes + links).
 *
 * The ts_topo container is opaque; node, link, plane and GPU-model records
 * are plain data owned by the topology and valid until ts_topo_free. */
#ifndef TOPSIM_TS_TOPO_H
#define TOPSIM_TS_TOPO_H

#include <stddef.h>
#include <stdint.h>

#include "topsim/ts_error.h"
#include "topsim/ts_units.h"

typedef struct ts_topo ts_topo;

typedef enum ts_node_kind {
  TS_NODE_GPU,
  TS_NODE_CPU,       /* one socket = one NUMA domain, holds the root complex */
  TS_NODE_PCIE_SW,   /* PCIe switch */
  TS_NODE_NVSWITCH,  /* NVLink switch chip (in a node or a rack) */
  TS_NODE_NIC,       /* network adapter port */
  TS_NODE_SWITCH,    /* network switch: leaf, spine, core ... */
  TS_NODE_KIND_COUNT
} ts_node_kind;

typedef enum ts_link_kind {
  TS_LINK_NVLINK,
  TS_LINK_PCIE,
  TS_LINK_CPU,     /* socket interconnect: UPI, Infinity Fabric (xGMI) */
  TS_LINK_C2C,     /* NVLink-C2C between Grace and a GPU */
  TS_LINK_NET,     /* network cable: NIC-switch or switch-switch */
  TS_LINK_KIND_COUNT
} ts_link_kind;

typedef enum ts_plane_kind {
  TS_PLANE_SCALE_UP,
  TS_PLANE_BACKEND,
  TS_PLANE_FRONTEND,
  TS_PLANE_STORAGE,
  TS_PLANE_OOB,
  TS_PLANE_KIND_COUNT
} ts_plane_kind;

/* Switch tiers; TS_TIER_NONE for anything that is not a network switch. */
typedef enum ts_tier {
  TS_TIER_NONE = 0,
  TS_TIER_LEAF = 1,
  TS_TIER_SPINE = 2,
  TS_TIER_CORE = 3,
  TS_TIER_MAX = 3
} ts_tier;

#define TS_NONE (-1) /* label value for "not applicable" */

/* ts_node.flags */
enum {
  TS_NODE_F_NVLS = 1u << 0, /* NVSwitch that reduces in the switch (NVLS) */
  /* The peer-to-peer engine of a CPU's root complex (`cpu_p2p_bandwidth`):
   * a PCIe-switch node hanging off its CPU; every in-host path that passes
   * through the CPU goes out to it and back, so P2P flows through one root
   * complex share its link (docs/topology-format.md). */
  TS_NODE_F_ROOT_COMPLEX = 1u << 1,
  /* An AMD socket (template cpu_link type xgmi, NCCL XML vendor
   * AuthenticAMD): NCCL's per-step network overhead is twice Intel's. */
  TS_NODE_F_CPU_AMD = 1u << 2
};
#define TS_NO_PLANE 0xFFFFu

/* Labels every GPU, NIC and switch carries (TS_NONE where meaningless). */
typedef struct ts_node {
  uint32_t name;     /* offset into the name arena: use ts_topo_node_name */
  uint8_t kind;      /* ts_node_kind */
  uint8_t tier;      /* ts_tier */
  uint16_t plane;    /* plane index or TS_NO_PLANE (host-internal devices) */
  int32_t host;      /* node (server/tray) index */
  int32_t rack;
  int32_t su;        /* scalable unit */
  int16_t numa;      /* NUMA domain (socket) inside the host */
  int16_t rail;      /* NIC and leaf rail */
  int16_t local;     /* index among devices of its kind in its host */
  uint16_t model;    /* GPU: index of its ts_gpu_model */
  uint16_t flags;    /* TS_NODE_F_* */
  uint32_t radix;    /* ports of a switch; 0 = not limited */
  int32_t group;     /* generator group (spine group, pod) or TS_NONE */
} ts_node;

typedef struct ts_link {
  uint32_t a, b;          /* endpoint node ids */
  uint8_t kind;           /* ts_link_kind */
  uint8_t pcie_gen;       /* PCIe links: generation, else 0 */
  uint16_t width;         /* lanes: NVLinks bundled, PCIe width, cables */
  uint16_t plane;         /* plane index or TS_NO_PLANE */
  uint16_t pad;
  double bandwidth;       /* bytes/s per direction, achievable */
  ts_time_ps latency;     /* per traversal of this link */
} ts_link;

typedef struct ts_gpu_model {
  const char *name;
  double bf16_flops;      /* dense peak FLOP/s */
  double fp8_flops;       /* dense peak FLOP/s, 0 if unsupported */
  uint64_t hbm_bytes;
  double hbm_bandwidth;   /* bytes/s */
  uint32_t sms;           /* streaming multiprocessors; 0 = unknown */
} ts_gpu_model;

/* How a fabric picks among equal-cost uplinks (docs/model.md "Routing"):
 * a per-flow hash (Ethernet/RoCE ECMP) or the destination's position
 * (InfiniBand D-mod-k, as OpenSM's ftree engine fills forwarding tables). */
typedef enum ts_routing {
  TS_ROUTING_ECMP_HASH = 0,
  TS_ROUTING_DMODK = 1,
} ts_routing;

typedef struct ts_plane {
  const char *name;
  uint8_t kind;           /* ts_plane_kind */
  uint8_t tiers;          /* switch tiers present (0 if no switches) */
  const char *link_preset;/* network technology preset name or "" */
  const char *generator;  /* "rail_optimized", "fat_tree", ... or "explicit" */
  ts_time_ps sw_overhead; /* per-message software overhead of the stack */
  int host_copy;          /* traffic crosses the host TCP stack (copies) */
  uint8_t routing;        /* ts_routing: how equal-cost uplinks are chosen */
} ts_plane;

/* Loads and builds a topology from a YAML file. On success *out owns the
 * graph (free with ts_topo_free). On failure returns TS_ENOINPUT, TS_ESYNTAX,
 * TS_ESCHEMA, TS_ELIMIT or TS_ENOMEM, sets *out = NULL, and d names
 * file:line:column. Structural validation is separate (ts_topo_validate). */
int ts_topo_load_file(const char *path, ts_topo **out, ts_diag *d);

/* ts_topo_load_file also reads NCCL topology XML (NCCL_TOPO_FILE,
 * NCCL_TOPO_DUMP_FILE; recognised by a leading '<') as one server. This
 * loads such a file as `hosts` copies of the server, their NICs on a
 * backend plane `net`: cabled rail-optimized over the technology preset
 * `fabric` (ib_ndr, roce_v2 ...; 64-port switches, the fewest tiers that
 * fit) or uncabled when fabric is NULL. TS_EUSAGE for a bad hosts/fabric;
 * XML errors are TS_ESYNTAX/TS_ESCHEMA naming the file and line. */
int ts_topo_load_nccl_xml(const char *path, uint32_t hosts, const char *fabric,
                          ts_topo **out, ts_diag *d);

/* Same as ts_topo_load_file, from a YAML buffer; name is used in
 * diagnostics. */
int ts_topo_load_buffer(const char *buf, size_t len, const char *name,
                        ts_topo **out, ts_diag *d);

/* Frees everything (NULL is fine). */
void ts_topo_free(ts_topo *t);

/* Topology name from the file's `name:` key. */
const char *ts_topo_name(const ts_topo *t);

uint32_t ts_topo_node_count(const ts_topo *t);
uint32_t ts_topo_link_count(const ts_topo *t);
uint32_t ts_topo_host_count(const ts_topo *t);
uint32_t ts_topo_plane_count(const ts_topo *t);
uint32_t ts_topo_gpu_model_count(const ts_topo *t);

const ts_node *ts_topo_node(const ts_topo *t, uint32_t id);
const ts_link *ts_topo_link(const ts_topo *t, uint32_t id);
const ts_plane *ts_topo_plane(const ts_topo *t, uint32_t id);
const ts_gpu_model *ts_topo_gpu_model(const ts_topo *t, uint32_t id);
const char *ts_topo_node_name(const ts_topo *t, uint32_t id);

/* CSR adjacency: directions (2*link + side) leaving node id. */
uint32_t ts_topo_degree(const ts_topo *t, uint32_t id);
const uint32_t *ts_topo_adj(const ts_topo *t, uint32_t id);
/* Head node of a direction (the node it arrives at). */
uint32_t ts_topo_dir_head(const ts_topo *t, uint32_t dir);

/* Looks a node up by full name ("dgx3/gpu5", "compute/leaf-su0-r2").
 * Returns 0 and sets *id, or TS_ESCHEMA when no node has that name. */
int ts_topo_find_node(const ts_topo *t, const char *name, uint32_t *id);

/* GPUs in topology order (host-major, local index minor): the rank order
 * higher layers map onto. Returns the count; *ids is owned by t. */
uint32_t ts_topo_gpus(const ts_topo *t, const uint32_t **ids);
/* CPU affinity of a CPU node as NCCL's topology XML gives it (comma-separated
 * hex words of a cpuset, most significant first, e.g. "0000ffff,ffffffff"),
 * or NULL when the topology does not say (YAML files never do). O(log n). */
const char *ts_topo_cpu_affinity(const ts_topo *t, uint32_t cpu_node);

/* Index of a plane by name, or -1. */
int ts_topo_plane_find(const ts_topo *t, const char *name);

const char *ts_node_kind_name(ts_node_kind k);
const char *ts_link_kind_name(ts_link_kind k);
const char *ts_plane_kind_name(ts_plane_kind k);
const char *ts_tier_name(ts_tier t);

#endif
