# cli/: the wzplan program; one file per subcommand: parsing, help, printing.
# The work of the commands is in runs/ (runs/local.mk).
noinst_LIBRARIES += libwzcli.a
libwzcli_a_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
libwzcli_a_SOURCES = \
	cli/cli.c cli/cli.h \
	cli/commands.c cli/commands.h \
	cli/cmd_cost.c cli/cmd_model.c \
	cli/cmd_propose.c cli/propose_cli.h cli/propose_cli.c \
	cli/cmd_archive.c cli/cmd_verify.c cli/cmd_plot.c \
	cli/cmd_trace.c \
	cli/cmd_codec.c cli/codec_measure.c cli/codec_compare.c cli/codec_cli.h cli/codec_cli.c cli/codec_pack.c \
	cli/codec_unpack.c \
	cli/cmd_traffic.c \
	cli/sim_cli.h cli/sim_cli.c cli/cmd_sim.c cli/cmd_size.c \
	cli/cmd_sweep.c cli/cmd_archive_merge.c

bin_PROGRAMS += wzplan
wzplan_SOURCES = cli/main.c
wzplan_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
wzplan_LDADD = $(WZ_LINK) $(WZ_EXTERNAL_LIBS)
wzplan_DEPENDENCIES = $(WZ_LIBS)
