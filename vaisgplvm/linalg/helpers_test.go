package linalg_test

import "github.com/gomlx/gomlx/core/tensors"

type tensorsT = tensors.Tensor

func newTensor(m [][]float64) *tensors.Tensor { return tensors.FromValue(m) }
