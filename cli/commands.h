/* The subcommands' entry points; each lives in cli/cmd_<name>.c. */
#ifndef WZ_COMMANDS_H
#define WZ_COMMANDS_H

int wz_cmd_cost(int argc, char **argv);
int wz_cmd_propose(int argc, char **argv);

#endif
