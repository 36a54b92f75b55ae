/* topo_load.h - private pieces shared by the schema loader's stages:
 * topo_load.c (document, GPU models, node groups), topo_template.c (node
 * templates: parse once, instantiate per host) and topo_plane.c (planes:
 * technology, generators, explicit switches and links). */
#ifndef TOPSIM_TOPO_LOAD_H
#define TOPSIM_TOPO_LOAD_H

#include "topo/topo_graph.h"
#include "topo/topo_nameidx.h"
#include "topo/topo_preset.h"
#include "topo/topo_schema.h"

typedef enum { ATT_CPU, ATT_PCIE } att_kind;

typedef struct att_ref {
  uint8_t kind;            /* att_kind */
  uint32_t index;
} att_ref;

/* Link parameters of one attachment group (PCIe gen/width or explicit). */
typedef struct link_params {
  ts_link_kind kind;
  uint8_t gen;
  uint16_t width;
  double bandwidth;        /* bytes/s per direction, achievable */
  ts_time_ps latency;
} link_params;

typedef struct nic_group {
  const char *prefix;      /* device name prefix, e.g. "compute-nic" */
  uint16_t plane;
  uint32_t count;
  att_ref *attach;         /* count entries */
  link_params link;        /* host side (PCIe) */
  double speed;            /* port bytes/s per direction, achievable */
  bool rails;              /* label NIC i with rail i */
  /* Per-NIC overrides filled by the NCCL XML importer (NULL: uniform). */
  link_params *links;      /* host-side link of NIC i */
  double *speeds;          /* port bytes/s (achievable) of NIC i */
  const char **names;      /* local name of NIC i (owned by the topology) */
} nic_group;

typedef enum { NVL_NONE, NVL_SWITCH, NVL_PAIRS } nvl_mode;

typedef struct topo_tmpl {
  const char *name;
  uint16_t model;          /* GPU model or UINT16_MAX when no GPUs */
  uint32_t cpus;
  link_params cpu_link;
  double cpu_p2p_bw;       /* root complex P2P limit, bytes/s; 0 = none */
  bool cpu_amd;            /* AMD sockets (cpu_link xgmi): TS_NODE_F_CPU_AMD */
  uint32_t pcie_count;
  att_ref *pcie_attach;    /* parent CPU of each switch */
  link_params pcie_link;
  uint32_t gpu_count;
  att_ref *gpu_attach;
  link_params gpu_link;
  nic_group *nics;
  uint32_t nic_groups;
  nvl_mode nvl;
  double nvl_bw;           /* per NVLink per direction */
  ts_time_ps nvl_lat;
  uint32_t nvl_switches, nvl_links, nvl_radix;
  bool nvls;               /* the NVSwitch chips reduce in-switch (NVLS) */
  uint32_t *nvl_per_switch;/* NVLinks from each GPU to switch s */
  uint32_t (*pairs)[2];
  uint32_t pair_count;
  /* Per-device detail only NCCL topology XML carries (topo_xml.c); NULL
   * means the uniform value above, which is all YAML can say. */
  int16_t *cpu_numa;       /* NUMA id of each CPU (default: its index) */
  const char **cpu_affinity; /* cpuset mask of each CPU, owned by the topo */
  bool cpu_mesh;           /* every CPU pair linked, not a chain */
  link_params *pcie_links; /* uplink of each PCIe switch */
  link_params *gpu_links;  /* uplink of each GPU */
  uint32_t *pair_links;    /* NVLinks of each pair (default nvl_links) */
  uint32_t *nvl_gpu_switch;/* [gpu * nvl_switches + s] NVLinks, 0 = none */
} topo_tmpl;

/* Per-plane parse results needed after hosts exist. */
typedef struct plane_in {
  const topo_ynode *node;
  const topo_net_preset *preset;
  double line_rate;        /* bytes/s per port per direction, signalling */
  double cable_bw;         /* achievable: line_rate x efficiency */
  double efficiency;
  ts_time_ps hop_latency;
} plane_in;

/* The longest name of a plane, switch, template, GPU model, node group or
 * NIC group: device names are built from them (up to 255 bytes), and a
 * megabyte-long group name would be copied once per host. */
#define TOPO_MAX_NAME 96

/* Limits of the uint16 plane and GPU model ids (65535 means none). */
#define TOPO_MAX_PLANES 65534u
#define TOPO_MAX_MODELS 65534u

typedef struct topo_loader {
  sc_ctx sc;
  ts_topo *t;
  topo_tmpl *tmpls;
  uint32_t tmpl_count;
  plane_in *planes;
  topo_nameidx model_idx;  /* GPU model name -> index */
  topo_nameidx plane_idx;  /* plane name -> index (built at declaration) */
  topo_nameidx tmpl_idx;   /* template name -> index into tmpls */
  uint32_t hosts_per_su;   /* SU size of the last node group (generators) */
} topo_loader;

/* Parses `planes:` metadata (names, kinds, technology) so templates can
 * refer to planes; fabric building happens later in topo_planes_build. */
int topo_planes_declare(topo_loader *L, const topo_ynode *seq);
/* Builds every plane's switches and links (generators or explicit lists). */
int topo_planes_build(topo_loader *L);

/* Parses `templates:` into L->tmpls. */
int topo_templates_parse(topo_loader *L, const topo_ynode *map);
/* Devices and links one host of template tm adds (exact, for budgets). */
void topo_template_size(const topo_tmpl *tm, uint64_t *devices, uint64_t *links);
/* Instantiates template tm as host `host` named `name` with rack/su labels. */
int topo_template_instantiate(topo_loader *L, const topo_tmpl *tm,
                              const char *name, int32_t host, int32_t rack,
                              int32_t su);
/* Fills tm from an NCCL topology XML file (NCCL_TOPO_FILE format) for a
 * template; nic_plane is the plane its NICs join (TS_NO_PLANE: none, an
 * error if the file has NICs) and model_name, if not NULL, overrides the
 * GPU model guessed from the file. Errors name the XML file and line. */
int topo_xml_template(topo_loader *L, const char *path, uint16_t nic_plane,
                      const char *model_name, topo_tmpl *tm);
/* Frees the per-device arrays of tm (not tm itself). */
void topo_tmpl_free_arrays(topo_tmpl *tm);

/* Frees L->tmpls. */
void topo_templates_free(topo_loader *L);

/* sc_str for a name: non-empty, at most TOPO_MAX_NAME bytes, and (when
 * no_slash) without '/'. `what` names the thing, e.g. "plane". */
int topo_name(const sc_ctx *c, const topo_ynode *map, const char *key,
              const char *what, bool no_slash, const char **out);
/* Checks a name given as a mapping key the same way. */
int topo_key_name(const sc_ctx *c, const topo_ynode *key, const char *what);

#endif
