/* Output folders that appear whole or not at all: files are made in a
 * staging folder beside the target, then moved into place. */
#ifndef WZ_PUBLISH_H
#define WZ_PUBLISH_H

#include "common/wz_error.h"

/* Creates an empty staging folder beside out_dir ("OUT.tmpXXXXXX"), making
 * out_dir's parents, and holds it (an flock on the folder) until it is
 * published or removed.  Staging folders of the same name left beside it by
 * a killed run (no process holds them, unchanged for a minute, this user's,
 * real folders) are removed first.  The caller frees *staging. */
wz_err wz_staging_create(const char *out_dir, char **staging /* OUT */, wz_diag *diag);
/* Writes text as staging/name. */
wz_err wz_staging_file(const char *staging, const char *name, const char *text, wz_diag *diag);
/* Moves everything staged into out_dir (renaming the staging folder itself
 * when out_dir does not exist yet) and removes the staging folder. */
wz_err wz_staging_publish(const char *staging, const char *out_dir, wz_diag *diag);
/* Removes a staging folder and what it holds (two levels deep at most). */
void wz_staging_remove(const char *staging);

#endif
