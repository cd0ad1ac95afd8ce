/* The subcommands' entry points; each lives in cli/cmd_<name>.c. */
#ifndef WZ_COMMANDS_H
#define WZ_COMMANDS_H

int wz_cmd_cost(int argc, char **argv);
int wz_cmd_model(int argc, char **argv);
int wz_cmd_propose(int argc, char **argv);
int wz_cmd_archive(int argc, char **argv);
/* `archive merge` (cli/cmd_archive_merge.c); argv[0] is "merge". */
int wz_cmd_archive_merge(int argc, char **argv);
int wz_cmd_verify(int argc, char **argv);
int wz_cmd_plot(int argc, char **argv);
int wz_cmd_codec(int argc, char **argv);
int wz_cmd_trace(int argc, char **argv);
int wz_cmd_traffic(int argc, char **argv);
int wz_cmd_sim(int argc, char **argv);
int wz_cmd_size(int argc, char **argv);
int wz_cmd_sweep(int argc, char **argv);

#endif
