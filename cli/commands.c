/* The command table: name, entry point and one-line summary. */
#include "cli/cli.h"
#include "cli/commands.h"

const wz_command wz_commands[] = {
	{ "cost", wz_cmd_cost, "annual GPU cost of cache formats for a scenario" },
	{ "propose", wz_cmd_propose, "write a pilot proposal for a scenario" },
};

const int wz_ncommands = (int)(sizeof wz_commands / sizeof wz_commands[0]);
