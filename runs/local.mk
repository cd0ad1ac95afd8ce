# runs/: the work of the commands, between the modules and cli/: one request
# per job (measure, size, propose...), the function that runs it and the one
# that records it in the archive; the proposal's assembly and its charts.
# It never prints: what it has to say goes to the sink of runs/say.h.
noinst_LIBRARIES += libwzruns.a
libwzruns_a_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
libwzruns_a_SOURCES = \
	runs/say.h runs/say.c \
	runs/setup.h runs/setup.c \
	runs/cost_report.h runs/cost_report.c \
	runs/sim_setup.h runs/sim_setup.c runs/size_run.c runs/deploy_run.c \
	runs/sim_record.h runs/sim_record.c \
	runs/measure.h runs/measure.c runs/compare.h runs/compare.c \
	runs/codec_record.h runs/codec_record.c runs/codec_measure_table.c \
	runs/propose.h runs/propose_run.c runs/propose_sim.c runs/propose_modes.c \
	runs/propose_modes_list.c \
	runs/propose_quality.c runs/propose_livekl.c runs/proposal.c \
	runs/charts.c runs/charts_codec.c \
	runs/publish.h runs/publish.c \
	runs/request.h runs/request.c runs/schema.h \
	runs/verify.h runs/verify.c
