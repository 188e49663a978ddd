package org.dpdl4j.datasets;

/**
 * A dataset's training and test parts.
 *
 * @param name   the dataset's name (e.g. "mnist")
 * @param train  training examples
 * @param test   test examples (never used for model selection)
 * @param digest SHA-256 (hex) identifying the files read, for data whose content a name does not fix (a folder of
 *               images, {@link ImageFolder#digest}); null for a named data set whose files are verified against
 *               known checksums
 */
public record TrainTest(String name, LabeledData train, LabeledData test, String digest) {
    /** A named data set whose content its verified files fix (no digest). */
    public TrainTest(String name, LabeledData train, LabeledData test) {
        this(name, train, test, null);
    }
}
