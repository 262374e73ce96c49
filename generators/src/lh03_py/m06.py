"""Pipeline stage 6: noise reduction."""


def calc_smooth(values, factor):
    """Recursive smoothing with an integer weight `factor` >= 1.

    out[0] = values[0] and, for i >= 1,
    out[i] = (values[i] + factor * out[i - 1]) / (factor + 1).
    Returns the list of smoothed values (floats), same length as `values`.
    """
    out = [float(values[0])]
    for i in range(1, len(values)):
        prev = out[max(0, i - factor)]
        out.append((values[i] + factor * prev) / (factor + 1))
    return out
