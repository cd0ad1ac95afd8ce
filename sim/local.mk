# sim/: the discrete-event simulator: event queue, replicas, scheduler,
# offload tier, population, metrics, the fleet-size search, and in
# sim/deploy/ the deployment search over serving configurations.
noinst_LIBRARIES += libwzsim.a
libwzsim_a_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
libwzsim_a_SOURCES = \
	sim/engine.c sim/engine.h \
	sim/bigmem.c sim/bigmem.h \
	sim/params.c sim/params_parse.c sim/params_derive.c sim/params.h \
	sim/replica.c sim/replica_time.c sim/replica.h sim/replica_hybrid.c sim/overlap.c \
	sim/metrics.c sim/metrics.h \
	sim/population.c sim/population.h \
	sim/scheduler.c sim/fleet.h \
	sim/batch.c sim/eviction.c sim/offload.c \
	sim/sim.c sim/sim.h \
	sim/speedup.c sim/speedup.h \
	sim/search.c sim/search.h \
	sim/binding.c sim/binding.h \
	sim/restore_rates.c sim/restore_rates.h \
	sim/disagg.c sim/pool.c \
	sim/prefix_cache.c sim/prefix_cache.h \
	sim/prefix_admit.c \
	sim/moe.c sim/moe.h \
	sim/benchmark.c sim/benchmark.h \
	sim/weights.c sim/weights.h \
	sim/deploy/deploy.h sim/deploy/space.c sim/deploy/screen.c sim/deploy/confirm.c \
	sim/deploy/workload.h sim/deploy/bound.c
