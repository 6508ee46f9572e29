import { Request, Response } from "express";

export interface User {
  id: string;
  email: string;
}

export type Handler = (req: Request, res: Response) => Promise<void>;

export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

export const findUser = async (users: User[], email: string): Promise<User | undefined> => {
  const wanted = normalizeEmail(email);
  return users.find((u) => normalizeEmail(u.email) === wanted);
};

export class UserService {
  private readonly users: User[] = [];

  constructor(private readonly clock: () => Date) {}

  register(email: string): User {
    const user: User = { id: crypto.randomUUID(), email: normalizeEmail(email) };
    this.users.push(user);
    return user;
  }

  onChange = (user: User): void => {
    console.log(this.clock(), user.id);
  };
}

export default function handler(service: UserService): Handler {
  return async (req, res) => {
    res.json(service.register(req.body.email));
  };
}
