"""The pieces of cortexm.export: capture (torch.export + decompositions), converter (the FX walk),
ops, quant and batchnorm (handler tables; batchnorm folds), convert (the walk with all tables).
Imports go one way: converter <- ops <- quant, batchnorm <- convert."""
