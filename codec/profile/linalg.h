/* Dense symmetric eigendecomposition for the codec's transforms and the
 * rate-distortion bound. */
#ifndef WZC_LINALG_H
#define WZC_LINALG_H

/* What the decompositions return besides 0: the iteration did not
 * converge, or memory ran out. */
#define WZC_EIG_NO_CONVERGENCE (-1)
#define WZC_EIG_NOMEM (-2)

/* Eigen-decomposes the symmetric n x n matrix a (row-major, overwritten by
 * the eigenvectors: row k is the eigenvector of eigenvalue w[k]), with the
 * eigenvalues in decreasing order.  Returns 0 or a WZC_EIG_ code. */
int wzc_sym_eigen(double *a, int n, double *w /* OUT [n] */);

/* The eigenvalues alone of the symmetric n x n matrix a (row-major; only its
 * lower triangle is read, and a is overwritten), in decreasing order: what
 * the rate-distortion bound needs, at a fraction of wzc_sym_eigen's cost.
 * Returns 0 or a WZC_EIG_ code. */
int wzc_sym_eigenvalues(double *a, int n, double *w /* OUT [n] */);

#endif
