"""The pieces of cortexm.export: capture (torch.export + decompositions), convert (the FX walk),
ops and quant (the op mapping tables), batchnorm (folding)."""
