// Package cmf implements GP-LVM-CMF: a deep latent variable model whose variational family is a
// Gaussian process latent variable model, trained by an auxiliary variational bound (the
// variational Gaussian process of Tran, Ranganath & Blei, ICLR 2016; the project's derivation
// "GP-LVM-CMF", whose equation numbers are cited below).
//
// # Generative model
//
// For data y_i [P], i = 1..N: p(z_i) = N(0, I_Dz) (7), and a decoder MLP with hidden width H:
//
//   - Gaussian (continuous data, 8-11): h = tanh(W1 z + b1), mu = W2 h + b2, log sigma^2 = W3 h + b3,
//     p(y | z) = N(y | mu, diag sigma^2);
//   - Bernoulli (binary data, 18-19): p = sigmoid(W2 tanh(W1 z + b1) + b2).
//
// The layers are GoMLX's (layers.Dense) with its default initialiser.
//
// # Variational family (Family "cmf", eqs. 2, 22-25)
//
// q(X_i) = N(phi_i, diag Phi_i) over GP inputs X_i [R]; a GP f: R^R -> R^Dz with one SE-ARD kernel
// shared by the Dz outputs and M learned inducing inputs Z_u [M, R]; q(u) = N(kappa, K_uu) per output
// (25), parameterised whitened: u = L kappa~ + L eps with K_uu = L L^T, so the whitened mean
// kappa~ [M, Dz] is the variable; q(f(X_i) | u) the GP conditional (22); and q(z_i | f(X_i)) =
// N(f(X_i), s^2 I) (23) with a learned s^2.
//
// # Collapsed bound (the default, Config.Bound "collapsed")
//
// Given X_i everything is linear-Gaussian: with the whitened q(u~) = N(kappa~, I), f(X_i) has mean
// A_i kappa~ and variance k_ii, so u and f integrate out and q(z_i | X_i) = N(A_i kappa~, (k_ii +
// s^2) I). The bound
//
//	L_coll = E_q[log p(y | z)] - E_q(X)[KL(q(z | X) || p(z))] - E_q[log q(X) - log r(X | z)]
//
// credits the spread the GP adds to q(z) in the entropy, which L_aux below does not: terms A and C
// have the same distribution under both, and L_coll - L_aux = (Dz / 2) log(1 + k_ii / s^2). Its term B
// is closed form with Psi2 (per point (1/2)[Dz (v - 1 - log v) + tr(kappa~^T L^-1 Psi2_i L^-T
// kappa~)], v = k_ii + s^2). With Config.PointVar, s^2 is a per-point diagonal s_i^2, and the
// family contains per-point mean-field exactly (kernel variance 0).
//
// # Auxiliary bound (4-6, Config.Bound "auxiliary")
//
//	L_aux = E_q[log p(y | z)] - E_q[KL(q(z | f) || p(z))] - E_q[log q(u, X) - log r(u, X | z)]
//	        (term A)            (term B)                     (term C)
//
// with the auxiliary model r(f, u, X | z) = q(f | u, X) r(u | z) prod_i r(X_i | z_i) (27-28), so
// that the GP conditional cancels. r(X_i | z_i) = N(X_i | mu_r(z_i), diag exp(lv_r(z_i))) is an MLP
// of z_i (AuxHidden tanh units). r(u | z) is taken as q(u) itself: a free Gaussian r(u) reaches
// that optimum (its KL to q(u) is then 0), and a function of pooled z would need every z_i at every
// mini-batch step.
//
// Term B has the closed form (12-17) with the psi statistics of the SE-ARD kernel under q(X)
// (kernels.PsiStatistics): per point, (1/2)[Dz (s^2 - 1 - log s^2) + Dz psi0_i +
// tr(kappa~^T L^-1 Psi2_i L^-T kappa~)]; TermB "mc" evaluates the same KL at the sampled f instead.
//
// Term C is evaluated at the joint sample (u, X, z) of q: the derivation's eqs. 32-34 write it as
// E_q(z)[KL(q(u, X) || r(u, X | z))], with the marginal q(u, X): that form is a valid but useless
// bound (it is maximised at r = q(u, X), where the auxiliary model does nothing). Here log r is
// evaluated at the joint sample X_i, z_i and the entropy of q(X_i) is exact.
//
// Samples are reparameterised from q (29-31): X_i = phi_i + Phi_i^(1/2) beta_i, u = L(kappa~ + eps),
// f_i = A_i u~ + (k_ii - |A_i|^2)^(1/2) xi_i with A_i = k(X_i, Z_u) L^-T, z_i = f_i + s eta_i.
// Mini-batches of B points scale the per-point terms by N/B.
//
// # Baselines (same decoder and budget)
//
//   - Family "meanfield": q(z_i) = N(m_i, diag s_i^2) per data point (the usual local variational
//     posterior);
//   - Family "amortised": (m_i, log s_i^2) = an encoder MLP of y_i (the VAE of Kingma & Welling).
//
// # Evaluation
//
// Bound is the bound per point with its Monte Carlo standard error; IWBound the importance-
// weighted form with K samples per point (log (1/K) sum_k w_k, w = p(y, z) r(u, X | z) / q(z, f, u,
// X) for cmf); LogLikelihood an estimate of the decoder's log p(y_i) independent of any q, by
// annealed importance sampling from p(z) to p(z | y_i) (package ais). Fit fits the local
// parameters of held-out points with every global parameter frozen.
package cmf
