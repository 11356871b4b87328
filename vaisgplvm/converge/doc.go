// Package converge fits a Bayesian GPLVM to its optimum instead of for a fixed number of Adam steps.
//
// For full-batch, fully observed data the mean-field bound is collapsed (Titsias 2009; Titsias &
// Lawrence 2010): q(u) is integrated out at its closed-form optimum, leaving a deterministic
// function of q(H) = prod_n N(a_n, L_n L_n^T), the inducing inputs Z [M, Q], the kernel and the
// noise variance, computed from the psi statistics of the SE-ARD kernel
// (kernels.PsiStatisticsFull). Collapsed evaluates it as a GoMLX graph over a train.Trainer's own
// variables, with its gradient by GoMLX's autodiff; Fit maximises it with L-BFGS
// (gonum/optimize, Moré-Thuente line search) until the bound stops moving (Rule), then writes the
// optimal q(u) into the trainer's variables, so that the trainer holds an ordinary model: its
// Monte Carlo MF bound, checkpoints, evaluation and every other bound start from there.
//
// Kernels without closed-form psi statistics (Matérn, linear here) are refused with an error that
// says so, as is data with missing entries (the collapsed form needs every output of every point).
package converge
