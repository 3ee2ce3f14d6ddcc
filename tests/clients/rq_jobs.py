"""The job functions the RQ test enqueues (imported by the worker process)."""


def square_plus(x, y):
    return x * x + y
