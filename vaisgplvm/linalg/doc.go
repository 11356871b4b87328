// Package linalg provides the dense linear algebra that GoMLX lacks (v0.28.6: no Cholesky, no
// triangular solve), as differentiable
// graph functions: Cholesky factorisation, the inverse of a lower-triangular factor, triangular
// solves, Cholesky solves and log-determinants.
//
// Every function accepts a single matrix [n, n] or a batch [B, n, n] and works on every backend,
// including the pure-Go one.
//
// # How it is built
//
// The forward values are computed by an unrolled algorithm (a recursive blocked factorisation with
// an unrolled column-by-column base case) whose input is wrapped in StopGradient, so autodiff never
// walks through the many small ops (nor through Slice). The gradients are attached in closed form
// with graph.IdentityWithCustomGradient:
//
//	Cholesky A = L L^T:   Abar = sym(L^-T Phi(L^T Lbar) L^-1),  Phi = lower triangle, diagonal halved
//	                      (Murray 2016, "Differentiation of the Cholesky decomposition").
//	Inverse X = L^-1:     Lbar = -tril(X^T Xbar X^T).
//
// The closed forms are themselves graph expressions of the differentiable outputs, so a gradient of
// a gradient (needed by the annealed Langevin chain) is again correct.
//
// # Jitter policy
//
// Cholesky never adds jitter itself. Callers that factor a kernel matrix add jitter * I, with
// DefaultJitter relative to the kernel variance (see gp.Inducing). A matrix that is not positive
// definite even after jitter yields NaN entries in L; the training loop's finite checks (package
// train) turn that into an error naming the iteration.
//
// # Gradients of matrix products
//
// Importing linalg installs internal/dotgrad, which makes GoMLX's gradients of Dot and DotGeneral
// contractions instead of broadcast products (a large speed-up on the pure-Go backend; identical
// values). Every model package imports linalg, so this holds for every graph the project builds.
package linalg

import _ "github.com/vaisgplvm/vaisgplvm/vaisgplvm/internal/dotgrad" // contraction gradients

// DefaultJitter is the relative diagonal jitter added to kernel matrices before factorisation:
// K + DefaultJitter * kernelVariance * I.
const DefaultJitter = 1e-6
