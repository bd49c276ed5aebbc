"""Streamlit pages. The only package in gradviz that imports streamlit."""
