#!/bin/sh
# The restore of one long DeepSeek-V3 session on a host of CORES cores
# (default 16), from the per-core rates bench/bench_restore measured (its
# rates file, docs/restore.md), against recomputing the prefill on one H100
# and against moving the session's fp8-mix bytes over PCIe Gen5 and from
# NVMe.  Usage: bench/restore_table.sh RATES [CORES] [TOKENS]
# Every figure is computed here from the rates file and the catalogs
# (data/models.csv, data/gpus.csv) or from the constants below, each cited.
rates=$1
cores=${2:-16}
tokens=${3:-131072}
top=${srcdir:-$(dirname "$0")/..}
if [ -z "$rates" ] || [ ! -r "$rates" ]; then
	echo "usage: restore_table.sh RATES [CORES] [TOKENS] (RATES: bench/bench_restore RATES)" >&2
	exit 2
fi
# DeepSeek-V3's layers and activated parameters (data/models.csv cites
# config_671B.json and the model's README); the H100 SXM's dense FP8 peak
# and PCIe figure (data/gpus.csv cites Glenn Lockwood's H100 notes: PCIe
# Gen5 128 GB/s counts both directions, so 64 GB/s host to device).
model=$(grep '^DeepSeek-V3,' "$top/data/models.csv")
gpu=$(grep '^H100 SXM 80GB,' "$top/data/gpus.csv" | head -1)
if [ -z "$model" ] || [ -z "$gpu" ]; then
	echo "restore_table: DeepSeek-V3 or H100 SXM 80GB missing from $top/data" >&2
	exit 2
fi
# Attention shape, not in the catalog: 128 heads, query/key head dimension
# 128 + 64, value head dimension 128 (config_671B.json:
# https://github.com/deepseek-ai/DeepSeek-V3/blob/main/inference/configs/config_671B.json).
heads=128 qk_dim=192 v_dim=128
# A PCIe Gen5 x4 NVMe SSD reads 12-14.5 GB/s sequentially; 14 GB/s
# (https://www.digiopedia.com/2025/10/pcie-gen-50-nvme-fastest-ssd-interface.html, secondary).
nvme_gbs=14
awk -F'\t' -v cores="$cores" -v T="$tokens" -v model="$model" -v gpu="$gpu" -v heads=$heads \
	-v qk=$qk_dim -v vd=$v_dim -v nvme=$nvme_gbs -v src="$rates" '
/^#/ { next }
NF == 4 { r[$1] = $2 + 0 }
END {
	split(model, m, ","); split(gpu, g, ",")
	L = m[3]; R = m[4]; P = m[5]; act = m[10] * 1e9
	fp8 = g[5] * 1e12; pcie = g[7] / 2 * 1e9
	need = "restore_transformed_tokens_per_core_s zstd3_fp8mix_tokens_per_core_s fp8mix_bytes_per_token_layer"
	n = split(need, k, " ")
	for (i = 1; i <= n; i++)
		if (!(k[i] in r) || r[k[i]] <= 0) {
			printf "restore_table: %s: no %s (rerun bench/bench_restore with this build)\n", src, k[i] > "/dev/stderr"
			exit 2
		}
	tl = L * T
	flops = 2 * act * T + L * T * T / 2 * 2 * heads * (qk + vd)
	bytes = tl * r["fp8mix_bytes_per_token_layer"]
	printf "restore of a %d-token DeepSeek-V3 session (%d layers, %.0f token-layers) on %d cores,\n", T, L, tl, cores
	printf "from the per-core rates in %s (x %d cores: an upper bound on the scaling)\n\n", src, cores
	printf "| way back | time, s |\n|---|---|\n"
	printf "| recompute the prefill on one H100 at its dense FP8 peak (%.3g FLOPs; a lower bound) | %.1f |\n", flops, flops / fp8
	printf "| fp8-mix bytes (%.2f GB) over PCIe Gen5, %.0f GB/s host to device | %.3f |\n", bytes / 1e9, pcie / 1e9, bytes / pcie
	printf "| fp8-mix bytes from an NVMe SSD, %g GB/s | %.2f |\n", nvme, bytes / (nvme * 1e9)
	bk = ("wzx_v6_bits_per_value" in r) ? "wzx_v6_bits_per_value" : ("wzx_v5_bits_per_value" in r) ? "wzx_v5_bits_per_value" : ("wzx_v4_bits_per_value" in r) ? "wzx_v4_bits_per_value" : "wzx_bits_per_value"
	if (bk in r) {
		wb = tl * (R + P) * r[bk] / 8
		printf "| wzx bytes (%.2f GB, %.3f bits/value) from an NVMe SSD, %g GB/s | %.2f |\n", wb / 1e9, r[bk], nvme, wb / (nvme * 1e9)
	}
	printf "| zstd -3 decompressing fp8-mix bytes, %d cores | %.2f |\n", cores, tl / (cores * r["zstd3_fp8mix_tokens_per_core_s"])
	if ("restore_v5_transformed_tokens_per_core_s" in r)
		printf "| wzx v5 (type 5 blocks) to the transformed domain, %d cores | %.2f |\n", cores, tl / (cores * r["restore_v5_transformed_tokens_per_core_s"])
	if ("restore_v4_transformed_tokens_per_core_s" in r)
		printf "| wzx v4 to the transformed domain (runs of four blocks), %d cores | %.2f |\n", cores, tl / (cores * r["restore_v4_transformed_tokens_per_core_s"])
	printf "| wzx v3 to the transformed domain (four blocks at once), %d cores | %.2f |\n", cores, tl / (cores * r["restore_transformed_tokens_per_core_s"])
	if ("restore_records_tokens_per_core_s" in r)
		printf "| wzx (what codec pack writes) to wz records (the GPU tier), %d cores | %.2f |\n", cores, tl / (cores * r["restore_records_tokens_per_core_s"])
	if ("restore_values_tokens_per_core_s" in r)
		printf "| wzx (what codec pack writes) to bf16 cache values, %d cores | %.2f |\n", cores, tl / (cores * r["restore_values_tokens_per_core_s"])
	if ("setup_one_block_ms" in r)
		printf "| set-up: open the %d-layer profile and the container, restore one block (one thread) | %.4f |\n", L, r["setup_one_block_ms"] / 1e3
	if ("setup_one_block_v4_whole_ms" in r)
		printf "| the same with a version 4 profile, read whole (the reference, same run) | %.4f |\n", r["setup_one_block_v4_whole_ms"] / 1e3
	if ("wzx_v6_bits_per_value" in r)
		printf "\nwzx v6 (what codec pack writes) to wz records per core / zstd -3: %.2fx", r["restore_records_tokens_per_core_s"] / r["zstd3_fp8mix_tokens_per_core_s"]
	if ("restore_v5_transformed_tokens_per_core_s" in r)
		printf "\nwzx v5 to the transformed domain per core / zstd -3: %.2fx\n", r["restore_v5_transformed_tokens_per_core_s"] / r["zstd3_fp8mix_tokens_per_core_s"]
	if ("restore_v4_transformed_tokens_per_core_s" in r)
		printf "wzx v4 to the transformed domain per core / zstd -3: %.2fx\n", r["restore_v4_transformed_tokens_per_core_s"] / r["zstd3_fp8mix_tokens_per_core_s"]
	printf "wzx v3 to the transformed domain per core / zstd -3: %.2fx\n", r["restore_transformed_tokens_per_core_s"] / r["zstd3_fp8mix_tokens_per_core_s"]
}' "$rates"
