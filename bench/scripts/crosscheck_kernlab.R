# Runs kernlab::csi on a data set written by crosscheck_kernlab.py and prints its output.
# Usage: Rscript crosscheck_kernlab.R X.csv Y.csv sigma rank kappa delta tol
# (rbfdot(sigma) = exp(-sigma ||x - y||^2), centering = TRUE). Output: one line per
# quantity, values with 17 significant digits; pivots 0-based, in the order chosen.
suppressMessages(library(kernlab))
args <- commandArgs(TRUE)
x <- as.matrix(read.csv(args[1], header = FALSE))
y <- as.matrix(read.csv(args[2], header = FALSE))
res <- csi(x, y, kernel = "rbfdot", kpar = list(sigma = as.numeric(args[3])),
           rank = as.integer(args[4]), centering = TRUE, kappa = as.numeric(args[5]),
           delta = as.integer(args[6]), tol = as.numeric(args[7]))
r <- ncol(res@.Data)
# pivots(res) is the inverse permutation (rows of G in input order); its order() is the
# pivot sequence
emit <- function(name, v) cat(name, sprintf("%.17g", v), "\n")
cat("version", as.character(packageVersion("kernlab")), "\n")
emit("pivots", order(pivots(res))[1:r] - 1)
emit("approx_error", diagresidues(res)[1:(r + 1)])
emit("prediction_error", maxresiduals(res)[1:(r + 1)])
emit("predicted_gain", predgain(res)[1:r])
emit("true_gain", truegain(res)[1:r])
