/* The command table: name, entry point and one-line summary. */
#include "cli/cli.h"
#include "cli/commands.h"

const wz_command wz_commands[] = {
	{ "cost", wz_cmd_cost, "annual GPU cost of cache formats for a scenario" },
	{ "model", wz_cmd_model, "the catalog's models and a model's cache per layer kind" },
	{ "propose", wz_cmd_propose, "write a pilot proposal for a scenario" },
	{ "archive", wz_cmd_archive, "list, show, export and compare archived runs" },
	{ "verify", wz_cmd_verify, "recompute an archived run and report what differs" },
	{ "plot", wz_cmd_plot, "draw an archived run's charts with gnuplot" },
	{ "codec", wz_cmd_codec, "cache formats: registry, wz profile, quality on traces" },
	{ "trace", wz_cmd_trace, "cache traces: synthetic windows, file summaries" },
	{ "traffic", wz_cmd_traffic, "import LLM-serving traces into a request table; summarize one" },
	{ "sim", wz_cmd_sim, "simulate one fleet serving a scenario's traffic" },
	{ "size", wz_cmd_size, "smallest fleet per cache format meeting latency targets, by simulation" },
	{ "sweep", wz_cmd_sweep, "run a grid of scenarios on every core or in shards, archived by point" },
};

const int wz_ncommands = (int)(sizeof wz_commands / sizeof wz_commands[0]);
