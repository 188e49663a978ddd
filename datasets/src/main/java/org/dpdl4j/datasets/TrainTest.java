package org.dpdl4j.datasets;

/**
 * A dataset's training and test parts.
 *
 * @param name        the dataset's name (e.g. "mnist")
 * @param train       training examples in memory, or null when they are read by index from {@code trainSource}
 * @param test        test examples (never used for model selection)
 * @param digest      SHA-256 (hex) identifying the files read, for data whose content a name does not fix (a folder of
 *                    images, {@link ImageFolder#digest}; packed shards, their training manifest's); null for a named
 *                    data set whose files are verified against known checksums
 * @param trainSource the training examples read by index ({@link PackedShards}) when {@code train} is null, else null
 */
public record TrainTest(String name, LabeledData train, LabeledData test, String digest, ExampleSource trainSource) {
    /**
     * Checks that the training examples are given in exactly one form.
     *
     * @param name        the dataset's name (e.g. "mnist")
     * @param train       training examples in memory, or null when they are read by index from {@code trainSource}
     * @param test        test examples (never used for model selection)
     * @param digest      SHA-256 (hex) identifying the files read, or null for a named data set with verified files
     * @param trainSource the training examples read by index when {@code train} is null, else null
     * @throws IllegalArgumentException unless exactly one of train and trainSource is given
     */
    public TrainTest {
        if ((train == null) == (trainSource == null)) {
            throw new IllegalArgumentException("give the training examples in memory or as a source, not " + (train == null
                    ? "neither" : "both"));
        }
    }

    /**
     * Training data in memory.
     *
     * @param name   the dataset's name (e.g. "mnist")
     * @param train  training examples in memory, not null
     * @param test   test examples (never used for model selection)
     * @param digest SHA-256 (hex) identifying the files read, or null for a named data set with verified files
     * @throws IllegalArgumentException if train is null
     */
    public TrainTest(String name, LabeledData train, LabeledData test, String digest) {
        this(name, train, test, digest, null);
    }

    /**
     * A named data set whose content its verified files fix (no digest), with its training data in memory.
     *
     * @param name  the dataset's name (e.g. "mnist")
     * @param train training examples in memory, not null
     * @param test  test examples (never used for model selection)
     * @throws IllegalArgumentException if train is null
     */
    public TrainTest(String name, LabeledData train, LabeledData test) {
        this(name, train, test, null, null);
    }

    /**
     * The training examples, whichever form they were given in.
     *
     * @return {@code train} if it is not null, else {@code trainSource}
     */
    public ExampleSource trainExamples() {
        return train != null ? train : trainSource;
    }
}
