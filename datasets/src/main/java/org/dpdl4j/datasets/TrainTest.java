package org.dpdl4j.datasets;

/**
 * A dataset's training and test parts.
 *
 * @param name  the dataset's name (e.g. "mnist")
 * @param train training examples
 * @param test  test examples (never used for model selection)
 */
public record TrainTest(String name, LabeledData train, LabeledData test) {
}
