#!/usr/bin/env bash
# demo.sh - install what is missing, build, and run topsim on a bundled
# topology: the DGX A100 SuperPOD (1 SU) summary and one node's matrix,
# then one training step of the Llama 70B example (8 micro-batches).
source "$(dirname "$0")/common.sh"
ensure_packages "${TOPSIM_PACKAGES[@]}"
configure_build build -DCMAKE_BUILD_TYPE=Release
cd "$TOPSIM_ROOT"
echo "\$ topsim topo topologies/superpod-a100-1su.yaml"
build/topsim topo topologies/superpod-a100-1su.yaml
echo
echo "\$ topsim topo topologies/a100-pcie-nvlink-bridge.yaml --matrix"
build/topsim topo topologies/a100-pcie-nvlink-bridge.yaml --matrix
echo
echo "\$ topsim run examples/llama-70b-64-h100.yaml --global-batch 16"
build/topsim run examples/llama-70b-64-h100.yaml --global-batch 16
