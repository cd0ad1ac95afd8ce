/* Dense symmetric eigendecomposition for the codec's transforms and the
 * rate-distortion bound. */
#ifndef WZC_LINALG_H
#define WZC_LINALG_H

/* Eigen-decomposes the symmetric n x n matrix a (row-major, overwritten by
 * the eigenvectors: row k is the eigenvector of eigenvalue w[k]), with the
 * eigenvalues in decreasing order.  Returns 0, or -1 when the iteration did
 * not converge or memory ran out. */
int wzc_sym_eigen(double *a, int n, double *w /* OUT [n] */);

/* The eigenvalues alone of the symmetric n x n matrix a (row-major; only its
 * lower triangle is read, and a is overwritten), in decreasing order: what
 * the rate-distortion bound needs, at a fraction of wzc_sym_eigen's cost.
 * Returns 0, or -1 when the iteration did not converge or memory ran out. */
int wzc_sym_eigenvalues(double *a, int n, double *w /* OUT [n] */);

#endif
