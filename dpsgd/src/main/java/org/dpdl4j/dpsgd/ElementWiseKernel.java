package org.dpdl4j.dpsgd;

import org.deeplearning4j.nn.conf.graph.ElementWiseVertex;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * DL4J's {@link ElementWiseVertex} with Add (the residual connection), Subtract (two inputs), Average or Product. It has
 * no parameters; it acts on each example separately, so per-example gradients pass through it unchanged in form.
 */
final class ElementWiseKernel extends MultiInputKernel {
    private final ElementWiseVertex.Op op;
    private INDArray[] inputs; // kept for Product
    private int arity;

    ElementWiseKernel(ElementWiseVertex.Op op, String where) {
        requireSupported(op, where);
        this.op = op;
    }

    /** Whether this kernel runs the op (Max runs on DL4J's own vertex, {@link VertexFallbackKernel}). */
    static boolean supports(ElementWiseVertex.Op op) {
        return op == ElementWiseVertex.Op.Add || op == ElementWiseVertex.Op.Subtract || op == ElementWiseVertex.Op.Average
                || op == ElementWiseVertex.Op.Product;
    }

    /** @throws IllegalArgumentException for an op other than Add, Subtract, Average or Product (Max) */
    static void requireSupported(ElementWiseVertex.Op op, String where) {
        if (op != ElementWiseVertex.Op.Add && op != ElementWiseVertex.Op.Subtract && op != ElementWiseVertex.Op.Average
                && op != ElementWiseVertex.Op.Product) {
            throw new IllegalArgumentException(where + ": element-wise op " + op + " is not supported by the DP-SGD engine; "
                    + "use Add, Subtract, Average or Product");
        }
    }

    @Override
    INDArray forward(INDArray[] x, boolean keep) {
        if (op == ElementWiseVertex.Op.Subtract && x.length != 2) {
            throw new IllegalArgumentException("Subtract needs exactly 2 inputs, got " + x.length);
        }
        arity = x.length;
        INDArray out = x[0].dup();
        for (int j = 1; j < x.length; j++) {
            switch (op) {
                case Subtract -> out.subi(x[j]);
                case Product -> out.muli(x[j]);
                default -> out.addi(x[j]);
            }
        }
        if (op == ElementWiseVertex.Op.Average) {
            out.divi(x.length);
        }
        inputs = keep && op == ElementWiseVertex.Op.Product ? x : null;
        return out;
    }

    @Override
    INDArray[] backwardInputs(INDArray grad, boolean needInputGradient) {
        if (!needInputGradient) {
            return null;
        }
        int n = arity;
        INDArray[] out = new INDArray[n];
        for (int j = 0; j < n; j++) {
            out[j] = switch (op) {
                case Subtract -> j == 0 ? grad.dup() : grad.neg();
                case Average -> grad.div(n);
                case Product -> {
                    INDArray p = grad.dup();
                    for (int k = 0; k < n; k++) {
                        if (k != j) {
                            p.muli(inputs[k]);
                        }
                    }
                    yield p;
                }
                default -> grad.dup(); // each input's gradient is its own array: later steps may work in place
            };
        }
        return out;
    }

    @Override
    void clear() {
        inputs = null;
    }
}
