"""Linters and a secret scanner run on a pull request's changed files: findings a tool
can prove, given to the review model as evidence and posted with their rule."""
