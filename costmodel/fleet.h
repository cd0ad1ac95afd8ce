/* Fleets and their annual cost: sizing by scaling a known baseline fleet
 * (the product page's method) or from memory accounting, rounded to whole
 * GPUs or replicas, priced at reserved and on-demand rates. */
#ifndef WZM_FLEET_H
#define WZM_FLEET_H

#include "common/wz_error.h"
#include "costmodel/catalog.h"

#define WZM_HOURS_PER_YEAR 8760.0

typedef enum {
	WZM_ROUND_UP = 0,      /* a planner buying GPUs */
	WZM_ROUND_NEAREST = 1, /* the product page's rule */
} wzm_rounding;

wz_err wzm_rounding_parse(const char *name, wzm_rounding *out /* OUT */, wz_diag *diag);
const char *wzm_rounding_name(wzm_rounding r);

/* Rounds a fractional GPU count to a multiple of unit (at least one unit). */
long wzm_round_gpus(double exact, int unit, wzm_rounding rule);

typedef struct {
	double gpus_exact;        /* before rounding */
	long gpus;                /* by the chosen rule */
	long gpus_up;
	long gpus_nearest;
	long replicas;            /* gpus / unit */
	double reserved_usd_year;
	double ondemand_usd_year;
	double saving_reserved;   /* baseline cost - this cost */
	double saving_ondemand;
} wzm_fleet;

/* Scaling: users per GPU in proportion to cache capacity, so
 * gpus = baseline_gpus * bytes / baseline_bytes, rounded to `unit` GPUs. */
void wzm_fleet_scaling(long baseline_gpus, double baseline_bytes, double bytes, int unit,
		       wzm_rounding rule, wzm_fleet *out /* OUT */);

/* Memory: whole replicas of gpus_per_replica GPUs, each holding
 * users_per_replica users.  WZ_ERR_RANGE when not one user fits. */
wz_err wzm_fleet_memory(long users, long users_per_replica, int gpus_per_replica,
			wzm_fleet *out /* OUT */, wz_diag *diag);

/* Annual cost of the fleet (gpus x 8,760 h x rate). */
void wzm_fleet_price(wzm_fleet *fleet, const wzm_rates *rates);
/* Saving against a baseline fleet priced the same way. */
void wzm_fleet_saving(wzm_fleet *fleet, const wzm_fleet *baseline);

#endif
