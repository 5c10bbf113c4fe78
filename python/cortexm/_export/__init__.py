"""The pieces of cortexm.export: capture (torch.export + decompositions), handlers (the handler
table the family modules of cortexm.ops fill, torch-free), converter (the FX walk), convert (the
walk with every handler). Imports go one way: handlers <- converter <- convert."""
