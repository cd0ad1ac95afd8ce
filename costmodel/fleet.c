/* Fleet sizing, rounding and annual cost (fleet.h). */
#include "costmodel/fleet.h"

#include <math.h>
#include <string.h>

wz_err wzm_rounding_parse(const char *name, wzm_rounding *out, wz_diag *diag)
{
	if (!strcmp(name, "up")) {
		*out = WZM_ROUND_UP;
		return WZ_OK;
	}
	if (!strcmp(name, "nearest")) {
		*out = WZM_ROUND_NEAREST;
		return WZ_OK;
	}
	return wz_diag_set(diag, WZ_ERR_INPUT, "rounding '%s': use up or nearest", name);
}

const char *wzm_rounding_name(wzm_rounding r)
{
	return r == WZM_ROUND_NEAREST ? "nearest" : "up";
}

long wzm_round_gpus(double exact, int unit, wzm_rounding rule)
{
	if (unit < 1)
		unit = 1;
	double units = exact / unit;
	/* A tolerance so that 1000 * 580/580 stays 1000, not 1001. */
	long n = rule == WZM_ROUND_NEAREST ? lround(units) : (long)ceil(units - 1e-9);
	if (n < 1)
		n = 1;
	return n * unit;
}

void wzm_fleet_scaling(long baseline_gpus, double baseline_bytes, double bytes, int unit,
		       wzm_rounding rule, wzm_fleet *out)
{
	memset(out, 0, sizeof *out);
	out->gpus_exact = (double)baseline_gpus * bytes / baseline_bytes;
	out->gpus_up = wzm_round_gpus(out->gpus_exact, unit, WZM_ROUND_UP);
	out->gpus_nearest = wzm_round_gpus(out->gpus_exact, unit, WZM_ROUND_NEAREST);
	out->gpus = rule == WZM_ROUND_NEAREST ? out->gpus_nearest : out->gpus_up;
	out->replicas = out->gpus / (unit < 1 ? 1 : unit);
}

wz_err wzm_fleet_memory(long users, long users_per_replica, int gpus_per_replica,
			wzm_fleet *out, wz_diag *diag)
{
	memset(out, 0, sizeof *out);
	if (users_per_replica < 1)
		return wz_diag_set(diag, WZ_ERR_RANGE,
				   "not one user fits in a replica's cache at this context");
	out->replicas = (users + users_per_replica - 1) / users_per_replica;
	out->gpus = out->replicas * gpus_per_replica;
	out->gpus_up = out->gpus_nearest = out->gpus;
	out->gpus_exact = (double)users / (double)users_per_replica * gpus_per_replica;
	return WZ_OK;
}

void wzm_fleet_price(wzm_fleet *fleet, const wzm_rates *rates)
{
	fleet->reserved_usd_year = (double)fleet->gpus * WZM_HOURS_PER_YEAR * rates->reserved_usd_h;
	fleet->ondemand_usd_year = (double)fleet->gpus * WZM_HOURS_PER_YEAR * rates->ondemand_usd_h;
}

void wzm_fleet_saving(wzm_fleet *fleet, const wzm_fleet *baseline)
{
	fleet->saving_reserved = baseline->reserved_usd_year - fleet->reserved_usd_year;
	fleet->saving_ondemand = baseline->ondemand_usd_year - fleet->ondemand_usd_year;
}
