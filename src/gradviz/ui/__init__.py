"""The Streamlit pages (autograd, devices, speed, training) and the pieces they share; the only
package in gradviz that imports streamlit."""
