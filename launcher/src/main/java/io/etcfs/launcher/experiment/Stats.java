package io.etcfs.launcher.experiment;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Minimum, median and maximum of some values (the median of an even count: the mean of the two middle ones). */
public record Stats(int count, double min, double median, double max) {
  public static Stats of(List<Double> values) {
    if (values.isEmpty()) {
      throw new IllegalArgumentException("no values");
    }
    List<Double> v = new ArrayList<>(values);
    Collections.sort(v);
    int n = v.size();
    double median = n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2;
    return new Stats(n, v.get(0), median, v.get(n - 1));
  }
}
