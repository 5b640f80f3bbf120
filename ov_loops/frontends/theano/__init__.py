"""frontends/theano"""
