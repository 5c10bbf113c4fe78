"""Write failures on demand: inside file_size_limit(n), a write that would take a file past n
bytes fails with EFBIG (SIGXFSZ ignored), as a full disk would."""

import contextlib
import resource
import signal


@contextlib.contextmanager
def file_size_limit(nbytes: int):
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, limit[1]))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, limit)
        signal.signal(signal.SIGXFSZ, handler)
